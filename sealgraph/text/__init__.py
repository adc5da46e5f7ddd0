"""All language and tokenisation: the lexicon, tokens, chunking, normalisation, names.

* :mod:`sealgraph.text.lexicon`: the one replaceable lexicon, tokenizer and stemmer.
* :mod:`sealgraph.text.normalize`: text normalised once (NFC, invisible characters), with
  an offset map back to the raw text.
* :mod:`sealgraph.text.tokens`: token-true counting (tiktoken).
* :mod:`sealgraph.text.chunking`: sentence-aware chunking with section paths.
* :mod:`sealgraph.text.names`: name keys, overlap, years.
"""
