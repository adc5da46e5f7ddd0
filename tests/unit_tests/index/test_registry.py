"""Index backends by address scheme: the folder by default, Qdrant's schemes, one more registered."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from support.fakes import write_tiny_docs

import sealgraph
from sealgraph.errors import IndexCorruptError, InputError
from sealgraph.index import (
    Index,
    build_index,
    is_index_address,
    load_index,
    read_index_manifest,
    register_backend,
    remove_documents,
    user_index_path,
    verify_index,
)
from sealgraph.index import _registry as registry
from sealgraph.index.folder import BACKEND as FOLDER
from sealgraph.index.qdrant import BACKEND as QDRANT
from sealgraph.index.qdrant import QdrantAddress

ROOT = Path(sealgraph.__file__).resolve().parents[1]


def test_a_path_is_a_folder_and_a_qdrant_address_is_qdrants(tmp_path):
    assert registry.locate(tmp_path) == (FOLDER, tmp_path)
    assert registry.locate(str(tmp_path)) == (FOLDER, tmp_path)
    backend, where = registry.locate("qdrant://db.local/notes")
    assert backend is QDRANT and where == QdrantAddress("notes", "db.local", 6333, False)
    assert registry.locate(where) == (QDRANT, where)  # a location is its backend's again
    assert registry.locate("QDRANTS://db.local:7/notes")[1].tls
    assert registry.locate("qdrant+memory://notes")[1].in_memory


def test_an_unknown_scheme_is_one_line_naming_the_registered_ones_and_no_key():
    with pytest.raises(InputError) as caught:
        load_index("s3://user:secret@bucket/index")
    message = str(caught.value)
    assert "\n" not in message and "secret" not in message
    assert message.startswith("unknown index address 's3://bucket/...'")
    assert "qdrant://..." in message and "qdrant+memory://..." in message


def test_addresses_and_paths_as_users_give_them():
    assert is_index_address("qdrant://h/c") and not is_index_address("./idx")
    assert not is_index_address(Path("qdrant:/x"))
    assert is_index_address(QdrantAddress("c"))
    assert user_index_path("qdrant://H:6333/c") == "qdrant://h:6333/c"
    assert user_index_path("~/idx") == str(Path("~/idx").expanduser())


def test_a_bad_scheme_is_refused():
    for scheme in ("", "9db", "my db", "a/b"):
        with pytest.raises(InputError, match="bad index address scheme"):
            register_backend(scheme, FOLDER)


class MirrorBackend:
    """A third backend: a folder index named by ``mirror://NAME`` under one root."""

    name = "mirror"

    def __init__(self, root: Path) -> None:
        self.root = root
        self.calls: list[str] = []

    def locate(self, address):
        return self.root / str(address).split("://", 1)[1]

    def build(self, inputs, location, **settings):
        self.calls.append("build")
        return FOLDER.build(inputs, location, **settings)

    def load(self, location, *, embedder=None, warn=None, lexicon=None):
        self.calls.append("load")
        return FOLDER.load(location, embedder=embedder, warn=warn, lexicon=lexicon)

    def remove(self, location, targets, *, embedder, lock_timeout, warn):
        self.calls.append("remove")
        return FOLDER.remove(
            location, targets, embedder=embedder, lock_timeout=lock_timeout, warn=warn
        )

    def refresh(self, location, *, embedder, lock_timeout, warn):
        self.calls.append("refresh")
        return FOLDER.refresh(location, embedder=embedder, lock_timeout=lock_timeout, warn=warn)

    def verify(self, location):
        self.calls.append("verify")
        return FOLDER.verify(location)

    def manifest(self, location):
        self.calls.append("manifest")
        return FOLDER.manifest(location)


@pytest.fixture
def mirror(tmp_path, monkeypatch):
    backend = MirrorBackend(tmp_path / "mirrors")
    monkeypatch.setattr(registry, "_BACKENDS", dict(registry._BACKENDS))
    register_backend("mirror", backend)
    return backend


def test_a_registered_backend_serves_every_public_function(tmp_path, mirror):
    docs = write_tiny_docs(tmp_path / "docs")
    index = build_index([docs], "mirror://notes", embedder="none", warn=lambda m: None)
    assert isinstance(index, Index) and index.path == tmp_path / "mirrors" / "notes"
    assert load_index("MIRROR://notes").n_docs == index.n_docs
    assert read_index_manifest("mirror://notes")["counts"]["documents"] == index.n_docs
    assert verify_index("mirror://notes") > 0
    first = sorted(p.name for p in docs.iterdir())[0]
    after = remove_documents("mirror://notes", [str(docs / first)], warn=lambda m: None)
    assert after.n_docs == index.n_docs - 1
    assert mirror.calls == ["build", "load", "manifest", "verify", "remove"]


def test_a_backend_registered_by_its_import_path_is_imported_on_first_use(tmp_path, monkeypatch):
    module = tmp_path / "thirdbackend.py"
    module.write_text(
        "from sealgraph.index.folder import FolderBackend\n"
        "class Third(FolderBackend):\n"
        "    name = 'third'\n"
        "    def locate(self, address):\n"
        f"        return __import__('pathlib').Path({str(tmp_path)!r}) / address.split('://')[1]\n"
        "BACKEND = Third()\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(registry, "_BACKENDS", dict(registry._BACKENDS))
    register_backend("third", "thirdbackend:BACKEND")
    assert "thirdbackend" not in sys.modules
    with pytest.raises(IndexCorruptError, match="no sealgraph index at"):
        read_index_manifest("third://nothing-here")
    assert "thirdbackend" in sys.modules


BLOCKED = """
import sys
sys.modules["qdrant_client"] = None  # importing it raises ImportError, as when not installed
import sealgraph, sealgraph.index
from sealgraph.index import _registry
from sealgraph.index.qdrant import BACKEND
backend, where = _registry.locate("qdrant://db.local:6334/notes")
assert backend is BACKEND and where.url == "qdrant://db.local:6334/notes", where
from sealgraph.errors import InputError
try:
    sealgraph.index.load_index("qdrant+memory://notes")
except InputError as exc:
    print(exc)
assert "qdrant_client" not in sys.modules or sys.modules["qdrant_client"] is None
"""


def test_the_qdrant_backend_is_registered_and_located_without_qdrant_client():
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(BLOCKED)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == (
        "a Qdrant index needs qdrant-client: pip install 'sealgraph[qdrant]'"
    )
