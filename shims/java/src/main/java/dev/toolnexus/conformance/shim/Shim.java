package dev.toolnexus.conformance.shim;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * The java shim's entry point: shim protocol v1 (SPEC §6) over stdin/stdout.
 *
 * <p>The main thread only reads lines: responses to our {@code host.*} requests are handed to
 * the {@link Channel}; harness requests run on worker threads, so a {@code client.run} blocked
 * in a host callback never stops the reader. All translation to the port lives in
 * {@link PortDriver}; this class owns framing, dispatch and the protocol's error codes.
 */
public final class Shim {
    static final int PROTOCOL_VERSION = 1;
    static final int PORT_ERROR = -32001;
    static final int UNSUPPORTED = -32002;
    static final int VERSION_MISMATCH = -32003;

    /** A protocol-level refusal carrying its JSON-RPC code. */
    static final class RpcError extends RuntimeException {
        final int code;
        final Object data;

        RpcError(int code, String message, Object data) {
            super(message);
            this.code = code;
            this.data = data;
        }
    }

    private final ObjectMapper json = new ObjectMapper();
    private final Channel channel;
    private final PortDriver driver;
    private final ExecutorService workers = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "shim-call");
        t.setDaemon(true);
        return t;
    });
    private final Map<String, Future<?>> running = new ConcurrentHashMap<>();

    private Shim(OutputStream protocolOut) {
        this.channel = new Channel(json, protocolOut);
        this.driver = new PortDriver(json, channel, libraryVersion());
    }

    public static void main(String[] args) throws IOException {
        // stdout carries protocol lines only: anything else printing there goes to stderr.
        OutputStream protocolOut = new FileOutputStream(FileDescriptor.out);
        System.setOut(System.err);
        new Shim(protocolOut).serve(System.in);
        System.exit(0);
    }

    private void serve(InputStream in) throws IOException {
        BufferedReader reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
        String line;
        while ((line = reader.readLine()) != null) {
            if (line.isBlank()) continue;
            JsonNode message;
            try {
                message = json.readTree(line);
            } catch (IOException e) {
                channel.fail(null, -32700, "parse error", null);
                continue;
            }
            if (message == null || !message.isObject()) {
                channel.fail(null, -32600, "invalid request: not a JSON object", null);
                continue;
            }
            if (!message.has("method")) {
                channel.resolve(message);
                continue;
            }
            String method = message.get("method").asText();
            Object id = json.convertValue(message.get("id"), Object.class);
            JsonNode params = message.path("params");
            switch (method) {
                case "shutdown" -> {
                    channel.respond(id, Map.of());
                    return;
                }
                case "$/cancel" -> cancel(params.path("id"));
                default -> {
                    if (id == null) break; // an unknown notification needs no answer
                    String key = String.valueOf(id);
                    running.put(key, workers.submit(() -> {
                        try {
                            dispatch(id, method, params);
                        } finally {
                            running.remove(key);
                        }
                    }));
                }
            }
        }
    }

    private void cancel(JsonNode id) {
        Future<?> call = running.remove(id.isTextual() ? id.asText() : id.toString());
        if (call != null) call.cancel(true);
    }

    private void dispatch(Object id, String method, JsonNode params) {
        try {
            Object result = switch (method) {
                case "initialize" -> driver.initialize(params);
                case "toolkit.describe" -> driver.describe(params);
                case "client.run" -> driver.run(params);
                default -> throw new RpcError(-32601, "method not found: " + method, null);
            };
            channel.respond(id, result);
        } catch (RpcError e) {
            channel.fail(id, e.code, e.getMessage(), e.data);
        } catch (RuntimeException e) {
            // a shim bug, not a port verdict: report it and keep serving
            StringWriter trace = new StringWriter();
            e.printStackTrace(new PrintWriter(trace));
            System.err.println(trace);
            channel.fail(id, -32603, "shim internal error: " + e, null);
        }
    }

    private static String libraryVersion() {
        Properties props = new Properties();
        try (InputStream in = Shim.class.getResourceAsStream("/shim.properties")) {
            if (in != null) props.load(in);
        } catch (IOException ignored) {
            // the version is informational; "unknown" says it was not stamped
        }
        return props.getProperty("library.version", "unknown");
    }
}
