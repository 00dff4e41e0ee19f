package dev.toolnexus.conformance.shim;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.github.muthuishere.toolnexus.LlmClient;
import io.github.muthuishere.toolnexus.LlmClient.MetricEvent;
import io.github.muthuishere.toolnexus.LlmClient.RunResult;
import io.github.muthuishere.toolnexus.LlmClient.StreamEvent;
import io.github.muthuishere.toolnexus.Request;

import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The shim's debug mode for "a shim adds nothing and cleans nothing" (SPEC §6): builds port
 * objects with nulls, empties and absent optionals, sends them through {@link Neutral} and
 * through Jackson's defaults, and prints one JSON line per case, {@code {"case", "shim",
 * "serializer"}}, for tests/shims/test_shim_honesty.py to compare. Run with
 * {@code java -cp toolnexus-java-shim.jar dev.toolnexus.conformance.shim.WireCheck}.
 *
 * <p>The port builds these objects itself (package-private constructors and factories), so
 * they are made here the way the port makes them, through reflection. Where the port's type
 * is a one-record union (StreamEvent) or a record the protocol renames nothing in but shapes
 * per kind (MetricEvent), the serializer side is the neutral shape of the kind, each field
 * written by Jackson from the port's own value.
 */
public final class WireCheck {
    private static final ObjectMapper JACKSON = new ObjectMapper();

    private WireCheck() {}

    public static void main(String[] args) throws Exception {
        Request request = new Request("req-1", "approval", "Allow?", null, Map.of(), null);
        LlmClient.Usage usage = new LlmClient.Usage();
        Map<String, Object> nullContent = new HashMap<>();
        nullContent.put("role", "assistant");
        nullContent.put("content", null);
        List<Object> messages = new ArrayList<>(List.of(Map.of("role", "user", "content", ""), nullContent));
        List<LlmClient.ToolCall> calls = List.of(
                toolCall("t", Map.of(), "Allow?", true, Map.of("pending", request)),
                toolCall("u", null, null, false, null));
        RunResult pending = runResult(null, messages, calls, 1, usage, null, "pending", request, null);
        RunResult done = runResult("", List.of(), List.of(), 1, null, "m", "done", null, null);
        emit("RunResult pending", Neutral.result(pending), JACKSON.writeValueAsString(pending));
        emit("RunResult done", Neutral.result(done), JACKSON.writeValueAsString(done));

        emit("stream event text", Neutral.event(streamEvent("text", String.class, null)), "{\"type\":\"text\",\"delta\":null}");
        emit("stream event tool_call", Neutral.event(streamEvent("toolCall", String.class, "c1", String.class, "t", Map.class, null)),
                "{\"type\":\"tool_call\",\"id\":\"c1\",\"name\":\"t\",\"args\":null}");
        emit("stream event tool_result",
                Neutral.event(streamEvent("toolResult", String.class, "c1", String.class, "t", String.class, null, boolean.class, false)),
                "{\"type\":\"tool_result\",\"id\":\"c1\",\"name\":\"t\",\"output\":null,\"isError\":false}");
        emit("stream event usage", Neutral.event(streamEvent("usage", LlmClient.Usage.class, null)), "{\"type\":\"usage\",\"usage\":null}");
        emit("stream event pending", Neutral.event(streamEvent("pending", Request.class, request)),
                "{\"type\":\"pending\",\"request\":" + JACKSON.writeValueAsString(request) + "}");
        emit("stream event done", Neutral.event(streamEvent("done", RunResult.class, pending)),
                "{\"type\":\"done\",\"result\":" + JACKSON.writeValueAsString(pending) + "}");

        emit("metric llm", Neutral.metric(new MetricEvent.Llm(null, "ok", 0, 0, 0)),
                "{\"event\":\"llm\",\"model\":null,\"status\":\"ok\",\"ms\":0,\"promptTokens\":0,\"completionTokens\":0}");
        emit("metric tool", Neutral.metric(new MetricEvent.Tool("t", "native", false, 0, false)),
                "{\"event\":\"tool\",\"tool\":\"t\",\"source\":\"native\",\"isError\":false,\"ms\":0}");
        emit("metric tool pending", Neutral.metric(new MetricEvent.Tool("t", "native", false, 0, true)),
                "{\"event\":\"tool\",\"tool\":\"t\",\"source\":\"native\",\"isError\":false,\"ms\":0,\"pending\":true}");
        emit("metric run", Neutral.metric(new MetricEvent.Run(null, 1, 0, 0, 0, null)),
                "{\"event\":\"run\",\"model\":null,\"turns\":1,\"toolCalls\":0,\"totalTokens\":0,\"ms\":0,\"error\":null}");
    }

    private static void emit(String name, Object shim, String serializer) throws JsonProcessingException {
        Map<String, String> line = new LinkedHashMap<>();
        line.put("case", name);
        line.put("shim", JACKSON.writeValueAsString(shim));
        line.put("serializer", serializer);
        System.out.println(JACKSON.writeValueAsString(line));
    }

    private static LlmClient.ToolCall toolCall(String name, Map<String, Object> args, String output, boolean isError,
                                               Map<String, Object> metadata) throws ReflectiveOperationException {
        Constructor<LlmClient.ToolCall> c = LlmClient.ToolCall.class.getDeclaredConstructor(
                String.class, Map.class, String.class, boolean.class, Map.class);
        c.setAccessible(true);
        return c.newInstance(name, args, output, isError, metadata);
    }

    private static RunResult runResult(String text, List<Object> messages, List<LlmClient.ToolCall> calls, int turns,
                                       LlmClient.Usage usage, String model, String status, Request pending, String limit)
            throws ReflectiveOperationException {
        Constructor<RunResult> c = RunResult.class.getDeclaredConstructor(String.class, List.class, List.class, int.class,
                LlmClient.Usage.class, String.class, String.class, Request.class, String.class);
        c.setAccessible(true);
        return c.newInstance(text, messages, calls, turns, usage, model, status, pending, limit);
    }

    /** One of StreamEvent's package-private factories, called with (type, value) pairs. */
    private static StreamEvent streamEvent(String factory, Object... typesAndValues) throws ReflectiveOperationException {
        Class<?>[] types = new Class<?>[typesAndValues.length / 2];
        Object[] values = new Object[types.length];
        for (int i = 0; i < types.length; i++) {
            types[i] = (Class<?>) typesAndValues[2 * i];
            values[i] = typesAndValues[2 * i + 1];
        }
        Method m = StreamEvent.class.getDeclaredMethod(factory, types);
        m.setAccessible(true);
        return (StreamEvent) m.invoke(null, values);
    }
}
