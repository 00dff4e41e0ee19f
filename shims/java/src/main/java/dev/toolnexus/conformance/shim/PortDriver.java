package dev.toolnexus.conformance.shim;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.toolnexus.conformance.shim.Shim.RpcError;
import io.github.muthuishere.toolnexus.Adapters;
import io.github.muthuishere.toolnexus.Answer;
import io.github.muthuishere.toolnexus.LlmClient;
import io.github.muthuishere.toolnexus.LlmClient.RunResult;
import io.github.muthuishere.toolnexus.Request;
import io.github.muthuishere.toolnexus.Tool;
import io.github.muthuishere.toolnexus.Toolkit;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/**
 * Protocol params to java-port calls and back: builds the Toolkit and the LlmClient a scenario
 * asks for, forwards waitFor / the conversation store / hooks to the host, and returns the
 * port's results in the protocol's shapes. No check lives here; every verdict is the harness's.
 */
final class PortDriver {
    /**
     * Honest for 0.16.0: no relay tools and no runWithAnswer/askWithAnswer in the java port;
     * {@code register} (protocol v1.1) is the port's Toolkit.register.
     */
    static final List<String> CAPABILITIES = List.of("openai", "anthropic", "stream", "store", "hooks", "register", "resultMetadata");

    private final ObjectMapper json;
    private final Channel channel;
    private final String libraryVersion;

    PortDriver(ObjectMapper json, Channel channel, String libraryVersion) {
        this.json = json;
        this.channel = channel;
        this.libraryVersion = libraryVersion;
    }

    Map<String, Object> initialize(JsonNode params) {
        if (params.path("protocolVersion").asInt(-1) != Shim.PROTOCOL_VERSION) {
            throw new RpcError(Shim.VERSION_MISMATCH, "this shim speaks protocol " + Shim.PROTOCOL_VERSION,
                    Map.of("supported", List.of(Shim.PROTOCOL_VERSION)));
        }
        Map<String, Object> library = new LinkedHashMap<>();
        library.put("name", "io.github.muthuishere:toolnexus");
        library.put("version", libraryVersion);
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("protocolVersion", Shim.PROTOCOL_VERSION);
        m.put("port", "java");
        m.put("language", "java");
        m.put("library", library);
        m.put("capabilities", CAPABILITIES);
        return m;
    }

    Map<String, Object> describe(JsonNode params) {
        try (Toolkit toolkit = toolkit(params.path("toolkit"), new NativeTools(json))) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("openai", toolkit.toOpenAI());
            m.put("anthropic", toolkit.toAnthropic());
            m.put("gemini", Adapters.toGemini(toolkit.tools()));
            return m;
        }
    }

    Map<String, Object> run(JsonNode p) {
        String entry = p.path("entry").asText();
        if (entry.equals("runWithAnswer") || entry.equals("askWithAnswer")) {
            throw new RpcError(Shim.UNSUPPORTED, "the java port has no " + entry + " (no answer-carrying resume)",
                    Map.of("capability", "resume"));
        }
        if (!List.of("run", "ask", "stream").contains(entry)) {
            throw new RpcError(-32602, "unknown entry " + entry, null);
        }
        NativeTools tools = new NativeTools(json);
        List<Map<String, Object>> metrics = Collections.synchronizedList(new ArrayList<>());
        List<Map<String, Object>> events = Collections.synchronizedList(new ArrayList<>());
        // A stream's waitFor tells the host whether the consumer got the pending event first.
        Sightings seen = entry.equals("stream") ? new Sightings() : null;
        try (Toolkit toolkit = toolkit(p.path("toolkit"), tools)) {
            LlmClient client = LlmClient.create(options(p, tools, metrics, seen));
            String prompt = p.path("prompt").asText();
            RunResult result;
            try {
                result = switch (entry) {
                    case "run" -> client.run(prompt, toolkit, listOrNull(p.get("history")));
                    case "ask" -> client.ask(prompt, toolkit, p.path("id").asText());
                    default -> client.stream(prompt, toolkit, ev -> {
                                events.add(Neutral.event(ev));
                                if (ev.request() != null) seen.saw(ev.request().id());
                            },
                            p.hasNonNull("id") ? p.get("id").asText() : null);
                };
            } catch (RuntimeException e) {
                throw portError(e);
            }
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("result", Neutral.result(result));
            m.put("events", events);
            m.put("metrics", metrics);
            m.put("executions", tools.executions());
            return m;
        }
    }

    private LlmClient.Options options(JsonNode p, NativeTools tools, List<Map<String, Object>> metrics, Sightings seen) {
        LlmClient.Options o = new LlmClient.Options()
                .baseUrl(p.path("baseUrl").asText())
                .style(p.path("style").asText())
                .model(p.path("model").asText())
                .apiKey(p.path("apiKey").asText())
                .maxTurns(p.path("maxTurns").asInt(10))
                .retries(0)
                .onMetric(ev -> metrics.add(Neutral.metric(ev)))
                .hooks(hooks(p.path("hooks"), tools));
        if (p.hasNonNull("systemPrompt")) o.systemPrompt(p.get("systemPrompt").asText());
        if (p.path("waitFor").asBoolean(false)) o.waitFor(request -> waitFor(request, tools, seen));
        if (p.path("store").asBoolean(false)) o.store(new HostStore());
        return o;
    }

    /** The toolkit from {@code tools}, then (protocol v1.1) {@code register} in one Toolkit.register call. */
    private Toolkit toolkit(JsonNode spec, NativeTools tools) {
        List<Tool> extra = portTools(spec.path("tools"), tools);
        List<Tool> registered = portTools(spec.path("register"), tools);
        Toolkit toolkit;
        try {
            toolkit = Toolkit.create(new Toolkit.Options()
                    .builtins(spec.path("builtins").asBoolean(false))
                    .extraTools(extra));
        } catch (RuntimeException e) {
            throw new RpcError(Shim.PORT_ERROR, messageOf(e), Map.of("kind", "toolkit"));
        }
        if (registered.isEmpty()) return toolkit;
        try {
            return toolkit.register(registered.toArray(Tool[]::new));
        } catch (RuntimeException e) {
            toolkit.close();
            throw new RpcError(Shim.PORT_ERROR, messageOf(e), Map.of("kind", "toolkit"));
        }
    }

    private static List<Tool> portTools(JsonNode specs, NativeTools tools) {
        List<Tool> built = new ArrayList<>();
        for (JsonNode tool : specs) {
            if (tool.path("relay").asBoolean(false)) {
                throw new RpcError(Shim.UNSUPPORTED, "the java port has no relay tools (tool "
                        + tool.path("name").asText() + ")", Map.of("capability", "relay"));
            }
            built.add(tools.build(tool));
        }
        return built;
    }

    private Answer waitFor(Request request, NativeTools tools, Sightings seen) {
        tools.resumeCallOf(request);
        Map<String, Object> params = new LinkedHashMap<>();
        params.put("request", request);
        if (seen != null) params.put("pendingEventSeen", seen.waitSeen(request.id()));
        JsonNode reply = channel.call("host.waitFor", params);
        return json.convertValue(reply.path("answer"), Answer.class);
    }

    /**
     * A beforeTool hook is always installed: it tells {@link NativeTools} which call is running
     * (the port gives tools no call id). It asks the host only when the scenario requested it.
     */
    private LlmClient.Hooks hooks(JsonNode names, NativeTools tools) {
        boolean before = false;
        boolean after = false;
        for (JsonNode n : names) {
            before |= n.asText().equals("beforeTool");
            after |= n.asText().equals("afterTool");
        }
        final boolean forwardBefore = before;
        LlmClient.Hooks hooks = new LlmClient.Hooks().beforeTool(ev -> {
            tools.enterCall(ev.id());
            if (!forwardBefore) return null;
            JsonNode override = channel.call("host.hook", hookParams("beforeTool", event(ev.name(), ev.args(), ev.id())))
                    .path("override");
            if (override.has("args")) return LlmClient.ToolOverride.withArgs(asMap(override.get("args")));
            if (override.has("suspend")) return LlmClient.ToolOverride.withResult(tools.suspend(override.get("suspend")));
            return null;
        });
        if (after) {
            hooks.afterTool(ev -> {
                Map<String, Object> event = event(ev.name(), ev.args(), ev.id());
                Map<String, Object> result = new LinkedHashMap<>();
                result.put("output", ev.result().output());
                result.put("isError", ev.result().isError());
                event.put("result", result);
                channel.call("host.hook", hookParams("afterTool", event));
                return null; // afterTool overrides are not used in protocol v1
            });
        }
        return hooks;
    }

    private static Map<String, Object> hookParams(String name, Map<String, Object> event) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("name", name);
        m.put("event", event);
        return m;
    }

    private static Map<String, Object> event(String name, Map<String, Object> args, String callId) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("name", name);
        m.put("args", args);
        if (callId != null) m.put("callId", callId);
        return m;
    }

    /** The port's ConversationStore, kept by the host so a transcript outlives the shim. */
    private final class HostStore implements LlmClient.ConversationStore {
        @Override
        public List<Object> get(String id) {
            return listOrNull(channel.call("host.store.get", Map.of("id", id)).get("messages"));
        }

        @Override
        public void save(String id, List<Object> messages) {
            Map<String, Object> params = new LinkedHashMap<>();
            params.put("id", id);
            params.put("messages", messages);
            channel.call("host.store.save", params);
        }
    }

    @SuppressWarnings("unchecked")
    private List<Object> listOrNull(JsonNode node) {
        if (node == null || !node.isArray()) return null;
        return json.convertValue(node, ArrayList.class);
    }

    @SuppressWarnings("unchecked")
    private Map<String, Object> asMap(JsonNode node) {
        return json.convertValue(node, LinkedHashMap.class);
    }

    /** The port refused or failed the run: a verdict on the port, with its own message. */
    private static RpcError portError(RuntimeException e) {
        Throwable cause = e;
        while ((cause instanceof CompletionException || cause instanceof ExecutionException) && cause.getCause() != null) {
            cause = cause.getCause();
        }
        String message = messageOf(cause);
        boolean provider = message.startsWith("LLM ") || cause instanceof IOException || cause.getCause() instanceof IOException;
        System.err.println("shim: the port failed the run: " + cause);
        return new RpcError(Shim.PORT_ERROR, message, Map.of("kind", provider ? "provider" : "run"));
    }

    private static String messageOf(Throwable e) {
        return e.getMessage() != null ? e.getMessage() : e.toString();
    }
}
