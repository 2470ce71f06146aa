"""What the dead-code check (vulture, run by ``make lint``) may not call dead: code that
is used from outside trustgate's own modules. Read by vulture, never run.

Everything else vulture finds in ``trustgate/`` is dead and is deleted, not listed here.
Names every module shares (pydantic's ``model_config``, ``_repr_html_``, the
``__exit__`` arguments, LangChain's chat-model hooks, the ``trust_reports`` state key)
are in ``[tool.vulture] ignore_names`` in pyproject.toml.
"""

# ruff: noqa
# type: ignore

# --- public API that users (and the tests) call; nothing inside trustgate does ----------
_.needs_citations  # SelfReport.needs_citations
_.rerender_to  # GateResult.rerender_to: what a driver of TrustGate.check re-runs
_.acheck  # TrustGate.acheck: the async TrustGate.check on a plain update
_.from_file  # Brief.from_file, EvidenceSet.from_file
_.from_lines  # Record.from_lines
_.read_lines  # Workspace.read_lines
_.clear_cache  # Workspace.clear_cache
_.recording  # CrossingSpan.recording
_.ahistory  # Persistence.ahistory
_.text_factory  # sqlite3.Connection.text_factory: set by the report log, read by sqlite3
_.from_path  # Lexicon.from_path
_.from_patterns  # PatternRule.from_patterns
stats  # trustgate._executor.stats: the pool's counters (bench/executor.py, the tests)
final_state  # LieCheck.final_state (a result field users assert on)
streamed  # LieCheck.streamed
skipped  # a draft sentence's reading: why it is not an assertion (shown in verdicts)
replaced  # Gap.replaced: the span of the draft the gap question stands in
judgments  # EvidenceSet.judgments: part of the evidence-set file format
dropped_spans  # Telemetry.dropped_spans: what a full background export queue dropped

# --- fields of the reference pipelines' graph states (LangGraph reads them) -------------
action_items
round
reviewed_manifest
research
step_index
trust_issues
reconciliation
record_text
markdown

# --- hooks a framework calls by name -----------------------------------------------------
requested  # the audit's stub chat model: a pydantic field, shown in its repr
handle_startendtag  # html.parser.HTMLParser hook
_.validateLink  # markdown-it-py's link validator, replaced on the parser instance
model_post_init  # pydantic hook
_.after_model  # langchain AgentMiddleware hooks
_.aafter_model
_.wrap_tool_call
_.awrap_tool_call
_.wrap_model_call  # TrustGateMiddleware: langchain calls it around the model
_.awrap_model_call
run_inline  # LangChain callback handlers: run in the caller's thread
_.on_start  # otel/_export.BackgroundSpanProcessor: the tracer provider calls it
_.on_end
_.on_chain_start  # the audit's sample-run handler: LangChain calls it
_.on_chain_end
_.on_chain_error
model_routing  # SampleRun.model_routing: what the sample run saw in routing functions
_.__class__  # graph/_compat.copy_builder: the copy takes the builder's class
_.stream_channels  # graph/_compat: set on a compiled graph LangGraph reads
_._state_mapper
_._kept_as_tuple  # drafts/verify.DraftVerdict: pydantic calls its field serializer
_.expanded  # drafts/_grammar/data.Classes: every example as a sentence, which the tests run
_.dispatch_table  # graph/_isolate: the pickler reads its reducers there
_.find_class  # graph/_isolate: the unpickler calls it for the copy instructions
