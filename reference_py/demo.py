"""``python -m reference_py.demo``: a durable relay round trip, entirely in-process.

An httpx MockTransport plays an OpenAI-style model for two turns (a relay call, then a final
answer). The demo halts on the relay call, round-trips the transcript and the surfaced
Request through JSON as a stateless host would, resumes with the host's Answer, and prints
the surfaced Request and the final text as JSON. Nothing external is started or contacted.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import httpx

from . import Answer, Request, create_client, create_toolkit, relay_tool

RAW_ARGUMENTS = '{ "city": "Oslo",  "units": "metric" }'

_SCRIPT: list[dict[str, Any]] = [
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "weather", "arguments": RAW_ARGUMENTS}}
        ],
    },
    {"role": "assistant", "content": "It is 4°C in Oslo."},
]


def _scripted_model() -> httpx.MockTransport:
    turns = iter(_SCRIPT)

    def reply(request: httpx.Request) -> httpx.Response:
        message = next(turns)
        usage = {"prompt_tokens": 3, "completion_tokens": 5, "total_tokens": 8}
        return httpx.Response(200, json={"choices": [{"message": message}], "usage": usage})

    return httpx.MockTransport(reply)


async def main() -> dict[str, Any]:
    async with httpx.AsyncClient(transport=_scripted_model()) as http:
        client = create_client(
            base_url="http://127.0.0.1:9/v1", model="demo-model", api_key="demo", http_client=http
        )
        toolkit = await create_toolkit(
            extra_tools=[relay_tool("weather", "Current weather for a city (run by the caller)")]
        )
        halted = await client.run("What is the weather in Oslo?", toolkit)
        assert halted.pending is not None, "the scripted model calls the relay tool, so the run halts"
        # A stateless host persists both as JSON and resumes later, maybe in another process.
        saved = json.loads(json.dumps({"messages": halted.messages, "pending": halted.pending.to_wire()}))
        pending = Request.from_wire(saved["pending"])
        assert pending.data is not None, "a relay request carries its calls in data"
        call = pending.data["calls"][0]
        answer = Answer(id=pending.id, ok=True, data={"results": [{"id": call["id"], "output": "4°C, clear", "isError": False}]})
        resumed = await client.run_with_answer(toolkit, history=saved["messages"], pending=pending, answer=answer)
    return {
        "halted": {"status": halted.status, "pending": saved["pending"]},
        "resumed": {"status": resumed.status, "text": resumed.text},
    }


if __name__ == "__main__":
    report = asyncio.run(main())
    json.dump(report, sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")
