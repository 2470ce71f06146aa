"""Does a sentence assert a cause, or guess? Constructions, not phrase lists.

The shipped causal and hedge rules used to be hundreds of regular-expression
fragments grown sentence by sentence; they scored near perfectly on the sentences
they were grown on and much worse on anyone else's. This package reads the
*construction* instead, one module per construction:

* :mod:`.setaside`: what is not an assertion (questions, embedded questions,
  statements about the document, apologies, names), masked or skipped first;
* :mod:`.connectives`: a causal **connective** joining two things (``because``,
  ``due to``, ``led to``, ``→``), including the clause connectives whose sense
  depends on what follows (``since`` + a clause, ``, so`` + a clause, ``With X
  down, ...``);
* :mod:`.attribution`: **blame and source** (``was responsible for``, ``came from``,
  ``comes down to``), causal with a thing on one side and a fault on one side;
* :mod:`.nouns`: a **cause or result noun** stated with a copula (``the result was
  ...``) and a **field label** (``Root cause: ...``);
* :mod:`.verbs`: a **causative verb** with a non-human subject and an object, a
  passive with an agent, a consequence participle, a periphrastic or a means clause;
* :mod:`.trouble`: an **implicit causative**, any verb with a fault as its subject
  ("a stale lock held every writer"), and a cleft ("X is what blocked Y");
* :mod:`.hedges`: epistemic phrases, epistemic modals (``may``, ``should now``) and
  verbs of belief in their epistemic frames;
* :mod:`.spelling`: a misspelt trigger read as the word it nearly is.

:mod:`.clause` holds the look-around they share (subject, head, object, negation),
:mod:`.reading` tries them at each token that can start one, :mod:`.scan` finds
those tokens in a whole draft. No word is written in Python: the vocabulary is
``lexicon/draft.txt``, the word classes ``lexicon/grammar.txt`` and each
construction's examples ``lexicon/constructions.txt`` (:mod:`.data` reads them,
:mod:`.words` names the classes), where every entry carries examples a test runs.
Every decision names the feature that fired, so a person restoring a sentence sees
why it went. Everything is a single left-to-right pass over the sentence's tokens
with bounded look-around: linear in the length of the sentence.
"""

from __future__ import annotations

from trustgate.verifiers.drafts._grammar.data import (
    Classes,
    GrammarLexicon,
    classes,
    lexicon,
    parse_classes,
    parse_lexicon,
)
from trustgate.verifiers.drafts._grammar.reading import Reading, analyse, analyse_cached, side
from trustgate.verifiers.drafts._grammar.scan import document_positions, trigger_words
from trustgate.verifiers.drafts._text import MASK

__all__ = [
    "MASK",
    "Classes",
    "GrammarLexicon",
    "Reading",
    "analyse",
    "analyse_cached",
    "classes",
    "document_positions",
    "lexicon",
    "parse_classes",
    "parse_lexicon",
    "side",
    "trigger_words",
]
