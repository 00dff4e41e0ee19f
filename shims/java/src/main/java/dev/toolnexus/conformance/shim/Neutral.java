package dev.toolnexus.conformance.shim;

import io.github.muthuishere.toolnexus.LlmClient.MetricEvent;
import io.github.muthuishere.toolnexus.LlmClient.RunResult;
import io.github.muthuishere.toolnexus.LlmClient.StreamEvent;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The port's objects as the shim hands them to the harness (SPEC §4, §6): a shim adds nothing
 * and cleans nothing. The port's RunResult (public camelCase fields), its Request and Usage
 * are handed over as they are, for Jackson's defaults to write exactly as a java host's
 * {@code new ObjectMapper()} would (a null field is written as {@code null}; Request's own
 * {@code @JsonInclude(NON_NULL)} leaves its absent keys out). MetricEvent (records of
 * three kinds) and StreamEvent (one record for six kinds) are mapped to the protocol's neutral
 * shape for their kind, field for field, every value as the port holds it; the only encoding
 * the mapping applies is the neutral tool event's, where {@code pending} appears only for a
 * suspension.
 */
final class Neutral {
    private Neutral() {}

    /** The port's RunResult itself: its field names are the neutral names. */
    static RunResult result(RunResult r) {
        return r;
    }

    static Map<String, Object> metric(MetricEvent event) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("event", event.event());
        switch (event) {
            case MetricEvent.Llm e -> {
                m.put("model", e.model());
                m.put("status", e.status());
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
                m.put("model", e.model());
                m.put("turns", e.turns());
                m.put("toolCalls", e.toolCalls());
                m.put("totalTokens", e.totalTokens());
                m.put("ms", e.ms());
                m.put("error", e.error());
            }
        }
        return m;
    }

    static Map<String, Object> event(StreamEvent e) {
        Map<String, Object> m = new LinkedHashMap<>();
        switch (e.type()) {
            case TEXT -> {
                m.put("type", "text");
                m.put("delta", e.delta());
            }
            case TOOL_CALL -> {
                m.put("type", "tool_call");
                m.put("id", e.id());
                m.put("name", e.name());
                m.put("args", e.args());
            }
            case TOOL_RESULT -> {
                m.put("type", "tool_result");
                m.put("id", e.id());
                m.put("name", e.name());
                m.put("output", e.output());
                m.put("isError", e.isError());
            }
            case USAGE -> {
                m.put("type", "usage");
                m.put("usage", e.usage());
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
}
