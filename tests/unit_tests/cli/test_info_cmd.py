import json

from sealgraph.cli import main


def test_info_says_what_an_index_holds(tiny_index, capsys):
    assert main(["info", "--index", str(tiny_index.path), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert (info["documents"], info["chunks"]) == (tiny_index.n_docs, tiny_index.n_chunks)
    assert info["backend"] == "folder" and info["format"].startswith("sealgraph-index v")
    assert info["lexical"]["method"] and info["chunking"]["encoding"] == "o200k_base"
    assert info["size_bytes"] > 0 and info["built"] and info["changed"]
    assert main(["info", "--index", str(tiny_index.path)]) == 0
    text = capsys.readouterr().out
    assert f"documents: {tiny_index.n_docs}" in text and "size:" in text


def test_info_of_a_folder_without_an_index_is_a_one_line_error(tmp_path, capsys):
    assert main(["info", "--index", str(tmp_path)]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("sealgraph: error: no sealgraph index at ")
