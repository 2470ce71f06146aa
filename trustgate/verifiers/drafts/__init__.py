"""The draft verifier: a pasted record's line citations checked, sentence by sentence.

Read in the order a draft goes through it: :mod:`.segment` splits the Markdown into
sentences, :mod:`._triggers` and :mod:`._grammar` (one module per construction) find
the causal and hedged constructions (their words are the data in ``lexicon/draft.txt``
and ``lexicon/grammar.txt``), :mod:`.rules` are
the sentence rules built on them, :mod:`.gaps` and :mod:`.relevance` fill and judge the
holes, :mod:`.figures` checks quoted numbers, :mod:`.verify` is the verdict and
:mod:`.check` the same check as a gate's verifier. The public face is
:mod:`trustgate.drafts`.
"""
