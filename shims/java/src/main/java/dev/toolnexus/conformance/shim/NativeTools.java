package dev.toolnexus.conformance.shim;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.github.muthuishere.toolnexus.Answer;
import io.github.muthuishere.toolnexus.NativeTool;
import io.github.muthuishere.toolnexus.Request;
import io.github.muthuishere.toolnexus.Tool;
import io.github.muthuishere.toolnexus.ToolContext;
import io.github.muthuishere.toolnexus.ToolResult;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Native tools built from the scenario's behaviour vocabulary (reply / fail / suspend+then /
 * alwaysSuspend / delayMs), executed in the shim, and the record of their executions.
 *
 * <p>The java port hands a tool no call id (its first execution gets no ToolContext at all),
 * so the shim learns it around the tool: the port runs {@code beforeTool} and the execution
 * on the same thread, so a hook that only notes {@code event.id()} names the call; for the
 * post-{@code waitFor} retry, the suspension's Request id leads back to the call that raised it.
 */
final class NativeTools {
    private final ObjectMapper json;
    private final List<Map<String, Object>> executions = Collections.synchronizedList(new ArrayList<>());
    private final ThreadLocal<String> currentCall = new ThreadLocal<>();
    /** Request id -> ids of the calls that suspended with it, in suspension order. */
    private final Map<String, Deque<String>> suspendedBy = new HashMap<>();

    NativeTools(ObjectMapper json) {
        this.json = json;
    }

    List<Map<String, Object>> executions() {
        return executions;
    }

    /** Called from {@code beforeTool}, on the thread that is about to execute the call. */
    void enterCall(String callId) {
        currentCall.set(callId);
    }

    /** Note that the call running on this thread suspended with {@code request}. */
    void noteSuspension(Request request) {
        String callId = currentCall.get();
        synchronized (suspendedBy) {
            suspendedBy.computeIfAbsent(request.id(), k -> new ArrayDeque<>()).addLast(callId);
        }
    }

    /** Called from {@code waitFor}: the retry that follows on this thread belongs to the call that
     * raised {@code request} (the streaming loop resolves on the run's own thread). */
    void resumeCallOf(Request request) {
        String mine = currentCall.get();
        synchronized (suspendedBy) {
            Deque<String> calls = suspendedBy.get(request.id());
            if (calls == null || calls.isEmpty()) return;
            if (mine != null && calls.remove(mine)) return;
            currentCall.set(calls.pollFirst());
        }
    }

    Tool build(JsonNode spec) {
        String name = spec.path("name").asText();
        JsonNode behaviour = spec.path("behaviour");
        Map<String, Object> schema = spec.hasNonNull("schema") ? asMap(spec.get("schema")) : null;
        return NativeTool.of(name, spec.path("description").asText(""), schema,
                (Map<String, Object> args, ToolContext ctx) -> execute(name, behaviour, args, ctx));
    }

    private ToolResult execute(String name, JsonNode behaviour, Map<String, Object> args, ToolContext ctx) {
        Answer answer = ctx == null ? null : ctx.answer();
        Map<String, Object> execution = new LinkedHashMap<>();
        execution.put("tool", name);
        execution.put("callId", currentCall.get());
        execution.put("args", args);
        execution.put("answered", answer != null);
        executions.add(execution);
        long delay = behaviour.path("delayMs").asLong(0);
        if (delay > 0) {
            try {
                Thread.sleep(delay);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("tool " + name + " interrupted");
            }
        }
        // A reply's or failure's own metadata rides along as scripted (a null value kept).
        Map<String, Object> metadata = behaviour.has("metadata") ? metadataOf(behaviour.get("metadata")) : null;
        if (behaviour.has("reply")) return ToolResult.ok(behaviour.get("reply").asText(), metadata);
        if (behaviour.has("fail")) return ToolResult.error(behaviour.get("fail").asText(), metadata);
        if (behaviour.has("alwaysSuspend")) return suspend(behaviour.get("alwaysSuspend"));
        if (answer == null) return suspend(behaviour.get("suspend"));
        JsonNode then = behaviour.path("then");
        if (then.has("reply")) return ToolResult.ok(then.get("reply").asText());
        Object output = answer.data() == null ? null : answer.data().get("output");
        return ToolResult.ok(output instanceof String s ? s : "");
    }

    private Map<String, Object> metadataOf(JsonNode node) {
        Map<String, Object> out = new LinkedHashMap<>();
        node.fields().forEachRemaining(e -> out.put(e.getKey(), e.getValue().isNull() ? null : json.convertValue(e.getValue(), Object.class)));
        return out;
    }

    /** A suspension built with the port's own helper; the scenario's Request id is kept. */
    ToolResult suspend(JsonNode requestSpec) {
        Request request = json.convertValue(requestSpec, Request.class);
        ToolResult result = ToolResult.pending(request);
        noteSuspension(ToolResult.pendingOf(result));
        return result;
    }

    @SuppressWarnings("unchecked")
    private Map<String, Object> asMap(JsonNode node) {
        return json.convertValue(node, LinkedHashMap.class);
    }
}
