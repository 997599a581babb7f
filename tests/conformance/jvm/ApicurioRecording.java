// What ApicurioAvro.java and ApicurioCloudEvents.java share: reading the records of an oracle JSONL file back into
// Connect data (Kafka's JsonConverter, then NaN, the infinities and -0.0 put back), converting each with the
// caller's converter pair against a running Apicurio Registry, and writing OUT_DIR/<IN> (one JSON line per record:
// the caller's {"topic", "key", "value", ...} plus "schemas": {content id: text} for the content ids the registry
// handed out while converting it, read in order up to the first gap) and OUT_DIR/<IN minus .jsonl>.artifacts.json
// (the default group's artifacts, each version's content id, global id, content text and references).
// A record whose conversion throws gets a line {"topic", "error"} (the exception), then the converters are made
// again (a failed Connect task restarted) and the record converted again (a second failure ends the run).
// Not run by itself: compile it first (javac -cp "$CP" -d "$HELPER" ApicurioRecording.java) and put "$HELPER" on
// the callers' classpath (Java 17 runs one source file at a time).
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.connect.data.Field;
import org.apache.kafka.connect.data.Schema.Type;
import org.apache.kafka.connect.data.SchemaAndValue;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.json.JsonConverter;

public class ApicurioRecording {
    /** A converter pair: one record's output line ({"topic", "key", "value", ...}). */
    public interface Pair {
        ObjectNode convert(String topic, JsonNode rec) throws Exception;
    }

    /** A new converter pair, configured with the options. */
    public interface Pairs {
        Pair make(Map<String, Object> conf) throws Exception;
    }

    public interface Body {
        void run() throws Exception;
    }

    public final ObjectMapper mapper = new ObjectMapper();
    final JsonConverter json = new JsonConverter();
    final HttpClient http = HttpClient.newHttpClient();
    final String v3;

    public ApicurioRecording(String registryUrl) {
        json.configure(Map.of("schemas.enable", "true", "converter.type", "value"));
        v3 = registryUrl + "/apis/registry/v3";
    }

    /** Runs `body`, then exits: the registry client's Vert.x threads would keep the JVM alive. */
    public static void exitAfter(Body body) {
        int status = 1;
        try {
            body.run();
            status = 0;
        } catch (Throwable e) {
            e.printStackTrace();
        } finally {
            System.exit(status);
        }
    }

    /** The converters' options: `<base>url` (the registry's v3 API), `<base>auto-register=true`, then the
     * comma-separated name=value pairs of system property `property`, each name prefixed with `prefix`. */
    public Map<String, Object> options(String base, String property, String prefix) {
        Map<String, Object> conf = new HashMap<>();
        conf.put(base + "url", v3);
        conf.put(base + "auto-register", "true");
        for (String extra : System.getProperty(property, "").split(",")) {
            if (!extra.isBlank()) conf.put(prefix + extra.split("=", 2)[0], extra.split("=", 2)[1]);
        }
        return conf;
    }

    /** A record's key or value (JsonConverter's {schema, payload}) as Connect data. */
    public SchemaAndValue toConnect(String topic, JsonNode node) throws Exception {
        SchemaAndValue sv = node == null || node.isNull() ? SchemaAndValue.NULL
            : json.toConnectData(topic, mapper.writeValueAsBytes(node));
        if (node != null) restoreNonFinite(sv.value(), node.get("payload"));
        return sv;
    }

    JsonNode get(String url) throws Exception {
        return mapper.readTree(text(url).body());
    }

    HttpResponse<String> text(String url) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create(url)).build(),
            HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    }

    /** Converts IN's records with converter pairs made by `pairs` and writes OUT_DIR/<IN> and its artifacts. */
    public void record(Pairs pairs, Map<String, Object> conf, Path outDir, Path in) throws Exception {
        Pair pair = pairs.make(conf);
        StringBuilder lines = new StringBuilder();
        long known = 0;
        for (String line : Files.readAllLines(in)) {
            if (line.isBlank()) continue;
            JsonNode rec = mapper.readTree(line);
            String topic = rec.get("topic").asText();
            if (topic.startsWith("__debezium-heartbeat")) continue;
            ObjectNode out;
            try {
                out = pair.convert(topic, rec);
            } catch (RuntimeException e) {  // a Connect task fails, and is restarted with new converters
                ObjectNode failed = mapper.createObjectNode().put("topic", topic).put("error", e.toString());
                lines.append(mapper.writeValueAsString(failed)).append('\n');
                pair = pairs.make(conf);
                out = pair.convert(topic, rec);  // failing again after a restart ends the run
            }
            ObjectNode schemas = out.putObject("schemas");
            while (true) {  // content ids are handed out in order: the new ones since the last record
                HttpResponse<String> r = text(v3 + "/ids/contentIds/" + (known + 1));
                if (r.statusCode() != 200) break;
                known++;
                schemas.put(Long.toString(known), r.body());
            }
            lines.append(mapper.writeValueAsString(out)).append('\n');
        }
        String name = in.getFileName().toString();
        Files.writeString(outDir.resolve(name), lines.toString());
        ObjectNode artifacts = mapper.createObjectNode();
        for (JsonNode a : get(v3 + "/groups/default/artifacts?limit=1000").get("artifacts")) {
            String id = a.get("artifactId").asText();
            var versions = artifacts.putArray(id);
            for (JsonNode v : get(v3 + "/groups/default/artifacts/" + id + "/versions?limit=1000").get("versions")) {
                String version = v.get("version").asText();
                ObjectNode entry = versions.addObject().put("version", version)
                    .put("contentId", v.get("contentId").asLong()).put("globalId", v.get("globalId").asLong())
                    .put("artifactType", v.get("artifactType").asText());
                String at = v3 + "/groups/default/artifacts/" + id + "/versions/" + version;
                entry.put("content", text(at + "/content").body());
                entry.set("references", get(at + "/references"));
            }
        }
        Files.writeString(outDir.resolve(name.replace(".jsonl", ".artifacts.json")),
            mapper.writerWithDefaultPrettyPrinter().writeValueAsString(artifacts) + "\n");
    }

    // JsonConverter writes NaN and the infinities as JSON strings and reads a string back into a FLOAT32/FLOAT64
    // field or array element as 0, and reads floats as BigDecimal, which has no -0.0: the SourceRecord held the
    // non-finite value or the negative zero, so put it back.
    static Object restored(JsonNode n, Type t) {
        if (t != Type.FLOAT64 && t != Type.FLOAT32) return null;
        boolean negativeZero = n.isNumber() && n.doubleValue() == 0.0 && 1 / n.doubleValue() < 0;
        if (!n.isTextual() && !negativeZero) return null;
        double d = n.isTextual() ? Double.parseDouble(n.asText()) : -0.0;
        return t == Type.FLOAT64 ? (Object) d : (Object) (float) d;
    }

    static void restoreNonFinite(Object value, JsonNode payload) {
        if (!(value instanceof Struct) || payload == null) return;
        Struct struct = (Struct) value;
        for (Field f : struct.schema().fields()) {
            JsonNode n = payload.get(f.name());
            if (n == null || n.isNull()) continue;
            Type t = f.schema().type();
            Object fixed = restored(n, t);
            if (fixed != null) struct.put(f, fixed);
            else if (t == Type.STRUCT) restoreNonFinite(struct.get(f), n);
            else if (t == Type.ARRAY && n.isArray()) {  // a float array's elements likewise
                @SuppressWarnings("unchecked")
                List<Object> items = (List<Object>) struct.get(f);
                for (int i = 0; i < n.size(); i++) {
                    Object item = restored(n.get(i), f.schema().valueSchema().type());
                    if (item != null) items.set(i, item);
                }
            }
        }
    }
}
