"""What an SGLang server answers about a request's speculation, read in vLLM's shape.

Asked with ``return_spec_tokens_details: true`` (REQUEST_FIELD), a speculative SGLang server (0.5.23:
``python/sglang/srt/entrypoints/openai/serving_chat.py``) ends a streamed ``/v1/chat/completions`` with one chunk
without choices whose ``sglext.spec_tokens_details`` (``protocol.py``: SpecTokensDetails) holds the request's
counts; a non-streamed answer has the same ``sglext`` at its top level. The stream is joined with that chunk's
``sglext`` kept (engines.chat_client.assemble_chat_stream), so a record's ``response`` carries it as sent. A server
that does not speculate, or whose request was never verified (``spec_verify_ct`` 0: e.g. one token, made by the
prefill), sends no ``sglext`` (``utils.py``: spec_tokens_details_from_meta_info gives None)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

REQUEST_FIELD = "return_spec_tokens_details"  # the chat request's field that asks for them
SGLEXT, DETAILS = "sglext", "spec_tokens_details"  # where the answer puts them: response[SGLEXT][DETAILS]
STATS = f"{SGLEXT}.{DETAILS}"  # ... as a message names it


def spec_details(response: Mapping[str, Any]) -> dict[str, Any] | None:
    """The response's ``sglext.spec_tokens_details`` (the first choice's where SGLang sent a list: a request with
    n > 1), None where there are none."""
    details = (response.get(SGLEXT) or {}).get(DETAILS)
    if isinstance(details, list):
        details = details[0] if details else None
    return dict(details) if isinstance(details, Mapping) else None


def sglang_speculation(response: Mapping[str, Any]) -> dict[str, Any] | None:
    """The request's speculative counts as vLLM reports them per request (``metrics.speculative_decoding``), from
    SGLang's ``sglext.spec_tokens_details``; None where the response has none.

    Derivation, from SGLang 0.5.23's source (python/sglang/srt/...):

    - each verification step of a request adds 1 to ``req.spec_verify_ct``, the drafted tokens the target accepted
      in it (the bonus token the target adds itself not counted) to ``req.spec_num_correct_drafts``, and 1 to entry
      k of ``req.spec_correct_drafts_histogram`` where it accepted k drafted tokens
      (managers/scheduler_components/batch_result_processor.py; managers/schedule_batch.py:
      update_spec_correct_drafts_histogram). So ``num_spec_steps`` = ``spec_verify_ct``,
      ``num_accepted_draft_tokens`` = ``spec_num_correct_drafts`` and ``acceptance_histogram`` =
      ``spec_correct_drafts_histogram`` (vLLM's: entry k = steps that accepted k drafted tokens), [] where SGLang
      sent none; SGLang's own identities: sum(histogram) = steps, sum(k * histogram[k]) = accepted.
    - ``num_draft_tokens`` = ``spec_num_proposed_drafts``, which SGLang does not count but computes as
      ``spec_verify_ct * (speculative_num_draft_tokens - 1)`` (managers/tokenizer_manager.py:
      _calculate_spec_decoding_metrics): the drafted tokens each step verifies, by the server's setting (EAGLE with
      topk 1: speculative_num_steps per step; a tree of topk > 1: all its nodes, though one path can be accepted).
    - ``spec_accept_length`` is not read: SGLang divides the completion tokens by the steps, so it counts each
      step's bonus token, the first token (from the prefill, not verified) and not what a stop or max_tokens cut
      from the last step; completion tokens - steps - 1 is the accepted drafted tokens only where nothing was cut.
      ``spec_accept_rate`` is accepted / drafted (above).
    """
    details = spec_details(response)
    if details is None:
        return None
    return {
        "num_draft_tokens": int(details.get("spec_num_proposed_drafts") or 0),
        "num_accepted_draft_tokens": int(details.get("spec_num_correct_drafts") or 0),
        "num_spec_steps": int(details.get("spec_verify_ct") or 0),
        "acceptance_histogram": [int(n) for n in details.get("spec_correct_drafts_histogram") or []],
    }
