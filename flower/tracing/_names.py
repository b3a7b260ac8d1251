"""The attribute and metric names flower writes: the OpenTelemetry GenAI conventions' where they have one,
`flower.*` for what only flower knows.

flower keeps its own strings rather than importing `opentelemetry.semconv`: the GenAI names there are
incubating (private module, Development status) and lag the conventions (no `cache_write` name yet).
Cache writes go out under both names the conventions have used, `gen_ai.usage.cache_creation.input_tokens`
and its successor `gen_ai.usage.cache_write.input_tokens` (the one the Claude Code CLI writes), until the
backends settle on one.

Beside them, the OpenInference names Arize Phoenix (and other UIs built on OpenInference) read to show a
span's kind, its session, its model call's messages and a tool's input and output: the same values
under a second name, so a run reads the same in either kind of backend.
"""

from __future__ import annotations

from typing import Final

PROVIDER: Final = "anthropic"

# -- GenAI conventions ----------------------------------------------------------------------------------
OPERATION: Final = "gen_ai.operation.name"
PROVIDER_NAME: Final = "gen_ai.provider.name"
AGENT_NAME: Final = "gen_ai.agent.name"
AGENT_ID: Final = "gen_ai.agent.id"
CONVERSATION: Final = "gen_ai.conversation.id"
REQUEST_MODEL: Final = "gen_ai.request.model"
RESPONSE_MODEL: Final = "gen_ai.response.model"
RESPONSE_ID: Final = "gen_ai.response.id"
FINISH_REASONS: Final = "gen_ai.response.finish_reasons"
TOOL_NAME: Final = "gen_ai.tool.name"
TOOL_CALL_ID: Final = "gen_ai.tool.call.id"
TOOL_TYPE: Final = "gen_ai.tool.type"
INPUT_TOKENS: Final = "gen_ai.usage.input_tokens"
"""Every input token, cached or not (the conventions: cached tokens SHOULD be included)."""
OUTPUT_TOKENS: Final = "gen_ai.usage.output_tokens"
CACHE_READ: Final = "gen_ai.usage.cache_read.input_tokens"
CACHE_CREATION: Final = "gen_ai.usage.cache_creation.input_tokens"
CACHE_WRITE: Final = "gen_ai.usage.cache_write.input_tokens"
INPUT_MESSAGES: Final = "gen_ai.input.messages"
OUTPUT_MESSAGES: Final = "gen_ai.output.messages"
TOOL_ARGUMENTS: Final = "gen_ai.tool.call.arguments"
TOOL_RESULT: Final = "gen_ai.tool.call.result"
ERROR_TYPE: Final = "error.type"

INVOKE_AGENT: Final = "invoke_agent"
CHAT: Final = "chat"
EXECUTE_TOOL: Final = "execute_tool"

# -- flower ------------------------------------------------------------------------------------------------
UNCACHED_INPUT: Final = "flower.usage.input_tokens"
"""Input tokens neither read from nor written to the cache (the API's own `input_tokens`)."""
COST: Final = "flower.cost.usd"
CLI_COST: Final = "flower.cost.cli_usd"
RUN_OK: Final = "flower.run.ok"
TURNS: Final = "flower.run.num_turns"
PEAK_CONTEXT: Final = "flower.run.peak_context"
DENIALS: Final = "flower.denials"
DENIED_TOOLS: Final = "flower.denied_tools"
HANDOFFS: Final = "flower.handoffs"
RETIRED: Final = "flower.run.retired_sessions"
RESUMED: Final = "flower.run.resumed"
DELEGATIONS: Final = "flower.delegations"
SPILLS: Final = "flower.spill.count"
SPILL_CHARS: Final = "flower.spill.chars"
SPILL_PATHS: Final = "flower.spill.paths"
SPILL_PATH: Final = "flower.spill.path"
API_ERRORS: Final = "flower.api_errors"
STORE_EXPIRED: Final = "flower.store.expired"
STORE_TRIMMED: Final = "flower.store.trimmed"
STORE_PRUNED: Final = "flower.store.pruned"
STORE_SAVED: Final = "flower.store.chars_saved"
CLI_AGENT_ID: Final = "flower.agent.id"
BACKGROUND: Final = "flower.delegation.background"
STATUS: Final = "flower.delegation.status"
MANDATE_CHARS: Final = "flower.delegation.mandate_chars"
REPORT_CHARS: Final = "flower.delegation.report_chars"
DENIED: Final = "flower.denied"
"""A call the wall or a permission rule refused: an attribute of its `execute_tool` span and an event on
it, never an error status (a denial is the wall doing its job)."""
DENIAL_REASON_CHARS: Final = "flower.denied.reason_chars"
DENIAL_REASON: Final = "flower.denied.reason"
TOOL_REFUSED: Final = "flower.tool.refused"
INTERRUPTED: Final = "flower.tool.interrupted"
"""A call the session's interrupt stopped before it ran (the CLI marks it `user-rejected`): flower's own
handoff, or the app's `interrupt()`. An attribute and an event of its `execute_tool` span, never an error
status: nothing failed, the turn was stopped on purpose."""
RESULT_CHARS: Final = "flower.tool.result_chars"
REQUEST_ID: Final = "flower.request.id"
TOKEN_KIND: Final = "flower.token.kind"
KEEP_WARM: Final = "flower.keep_warm"
"""True on a keep-warm ping's chat span (`flower.warm`)."""
KEEP_WARM_NUMBER: Final = "flower.keep_warm.number"
KEEP_WARM_WAITED: Final = "flower.keep_warm.waited_s"

# -- OpenInference (Arize Phoenix) ---------------------------------------------------------------------------
OI_KIND: Final = "openinference.span.kind"
OI_SESSION: Final = "session.id"
OI_MODEL: Final = "llm.model_name"
OI_PROVIDER: Final = "llm.provider"
OI_SYSTEM: Final = "llm.system"
OI_PROMPT_TOKENS: Final = "llm.token_count.prompt"
OI_COMPLETION_TOKENS: Final = "llm.token_count.completion"
OI_TOTAL_TOKENS: Final = "llm.token_count.total"
OI_CACHE_READ: Final = "llm.token_count.prompt_details.cache_read"
OI_CACHE_WRITE: Final = "llm.token_count.prompt_details.cache_write"
OI_INPUT: Final = "input.value"
OI_INPUT_MIME: Final = "input.mime_type"
OI_OUTPUT: Final = "output.value"
OI_OUTPUT_MIME: Final = "output.mime_type"
OI_INPUT_MESSAGES: Final = "llm.input_messages"
OI_OUTPUT_MESSAGES: Final = "llm.output_messages"
OI_TOOL_NAME: Final = "tool.name"
