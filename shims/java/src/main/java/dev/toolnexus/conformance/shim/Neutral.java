package dev.toolnexus.conformance.shim;

import io.github.muthuishere.toolnexus.LlmClient;
import io.github.muthuishere.toolnexus.LlmClient.MetricEvent;
import io.github.muthuishere.toolnexus.LlmClient.RunResult;
import io.github.muthuishere.toolnexus.LlmClient.StreamEvent;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The port's idiomatic objects (RunResult, metric events, stream events) mapped to the
 * protocol's neutral shapes (SPEC §4). Wire data inside them — {@code messages}, the
 * {@code pending} Request, a pending event's request, tool-call metadata — is passed through
 * as the port's own objects, for Jackson to serialize exactly as a java host would.
 */
final class Neutral {
    private Neutral() {}

    static Map<String, Object> result(RunResult r) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("status", r.status);
        m.put("text", r.text == null ? "" : r.text);
        m.put("messages", r.messages);
        if (r.model != null) m.put("model", r.model);
        m.put("turns", r.turns);
        List<Map<String, Object>> calls = new ArrayList<>();
        for (LlmClient.ToolCall c : r.toolCalls) {
            Map<String, Object> call = new LinkedHashMap<>();
            call.put("name", c.name);
            call.put("args", c.args == null ? Map.of() : c.args);
            call.put("output", c.output == null ? "" : c.output);
            call.put("isError", c.isError);
            if (c.metadata != null && !c.metadata.isEmpty()) call.put("metadata", c.metadata);
            calls.add(call);
        }
        m.put("toolCalls", calls);
        m.put("toolCallCount", r.toolCallCount);
        m.put("usage", usage(r.usage));
        if (r.limit != null) m.put("limit", r.limit);
        if (r.pending != null) m.put("pending", r.pending);
        return m;
    }

    static Map<String, Object> usage(LlmClient.Usage u) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("promptTokens", u == null ? 0 : u.promptTokens);
        m.put("completionTokens", u == null ? 0 : u.completionTokens);
        m.put("totalTokens", u == null ? 0 : u.totalTokens);
        return m;
    }

    static Map<String, Object> metric(MetricEvent event) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("event", event.event());
        switch (event) {
            case MetricEvent.Llm e -> {
                putIfSet(m, "model", e.model());
                putIfSet(m, "status", e.status());
                m.put("ms", e.ms());
                m.put("promptTokens", e.promptTokens());
                m.put("completionTokens", e.completionTokens());
            }
            case MetricEvent.Tool e -> {
                m.put("tool", e.tool());
                m.put("source", e.source());
                m.put("isError", e.isError());
                m.put("ms", e.ms());
                if (e.pending()) m.put("pending", true);
            }
            case MetricEvent.Run e -> {
                putIfSet(m, "model", e.model());
                m.put("turns", e.turns());
                m.put("toolCalls", e.toolCalls());
                m.put("totalTokens", e.totalTokens());
                m.put("ms", e.ms());
                putIfSet(m, "error", e.error());
            }
        }
        return m;
    }

    static Map<String, Object> event(StreamEvent e) {
        Map<String, Object> m = new LinkedHashMap<>();
        switch (e.type()) {
            case TEXT -> {
                m.put("type", "text");
                m.put("delta", e.delta() == null ? "" : e.delta());
            }
            case TOOL_CALL -> {
                m.put("type", "tool_call");
                m.put("id", e.id());
                m.put("name", e.name());
                m.put("args", e.args() == null ? Map.of() : e.args());
            }
            case TOOL_RESULT -> {
                m.put("type", "tool_result");
                m.put("id", e.id());
                m.put("name", e.name());
                m.put("output", e.output() == null ? "" : e.output());
                m.put("isError", e.isError());
            }
            case USAGE -> {
                m.put("type", "usage");
                m.put("usage", usage(e.usage()));
            }
            case PENDING -> {
                m.put("type", "pending");
                m.put("request", e.request());
            }
            case DONE -> {
                m.put("type", "done");
                m.put("result", result(e.result()));
            }
        }
        return m;
    }

    private static void putIfSet(Map<String, Object> m, String key, Object value) {
        if (value != null) m.put(key, value);
    }
}
