// neutral.go hands the port's values to the harness (SPEC §4, §6): a shim adds nothing
// and cleans nothing. RunResult, Request and Usage carry the port's own json tags, so
// encoding/json writes them exactly as a Go host would, and they are handed over as
// they are. MetricEvent and StreamEvent have no tags (PascalCase unions, one struct for
// every kind): each is mapped to the protocol's neutral shape for its kind, field for
// field, every value as the port holds it (a nil map stays null, an empty string stays
// empty); the only encoding the mapping applies is the neutral tool event's, where
// `pending` appears only for a suspension.
package main

import (
	"encoding/json"

	tn "github.com/muthuishere/toolnexus/golang"
)

// neutralResult is the port's RunResult itself: its json tags are the neutral names.
func neutralResult(r tn.RunResult) tn.RunResult { return r }

func neutralMetric(ev tn.MetricEvent) map[string]any {
	switch ev.Event {
	case "tool":
		m := map[string]any{"event": ev.Event, "tool": ev.Tool, "source": ev.Source, "isError": ev.IsError, "ms": ev.Ms}
		if ev.Pending {
			m["pending"] = true
		}
		return m
	case "llm":
		return map[string]any{"event": ev.Event, "model": ev.Model, "status": ev.Status, "ms": ev.Ms,
			"promptTokens": ev.PromptTokens, "completionTokens": ev.CompletionTokens}
	default:
		return map[string]any{"event": ev.Event, "model": ev.Model, "turns": ev.Turns, "toolCalls": ev.ToolCalls,
			"totalTokens": ev.TotalTokens, "ms": ev.Ms, "error": ev.Error}
	}
}

// neutralEvent maps one stream event and encodes it at once: the port may keep using
// the maps inside an event it has sent (a pending Request's data), and a host that
// forwards events serializes them when it receives them.
func neutralEvent(ev tn.StreamEvent) (json.RawMessage, error) {
	return json.Marshal(neutralEventFields(ev))
}

func neutralEventFields(ev tn.StreamEvent) map[string]any {
	switch ev.Type {
	case "text":
		return map[string]any{"type": ev.Type, "delta": ev.Delta}
	case "tool_call":
		return map[string]any{"type": ev.Type, "id": ev.ID, "name": ev.Name, "args": ev.Args}
	case "tool_result":
		return map[string]any{"type": ev.Type, "id": ev.ID, "name": ev.Name, "output": ev.Output, "isError": ev.IsError}
	case "usage":
		return map[string]any{"type": ev.Type, "usage": ev.Usage}
	case "pending":
		return map[string]any{"type": ev.Type, "request": ev.Request}
	case "done":
		return map[string]any{"type": ev.Type, "result": ev.Result}
	default:
		return map[string]any{"type": ev.Type}
	}
}
