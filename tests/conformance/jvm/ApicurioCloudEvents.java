// Debezium's CloudEventsConverter (debezium-connect-plugins) delegating to Apicurio Registry's own AvroConverter
// (apicurio-registry-utils-converter), as Debezium chooses it for `avro.apicurio.registry.url`, on the records of
// oracle JSONL files, against a running Apicurio Registry: each value (JsonConverter's {schema, payload} JSON, as
// Debezium's engine wrote it) goes back to Connect data through Kafka's JsonConverter, then through the key's and
// the value's CloudEventsConverter, which instantiates and configures Apicurio's AvroConverter itself.
// Writes OUT_DIR/<IN> with one JSON line per record: {"topic", "key", "value"} (hex, null for null) and
// "schemas": {content id: text} for the content ids the registry handed out while converting it (read in order
// up to the first gap); then OUT_DIR/<IN minus .jsonl>.artifacts.json: the default group's artifacts, each
// version's content id, global id, content text and references.
// The converter options: -Dce=name=value,... over `avro.apicurio.registry.url` (REGISTRY_URL/apis/registry/v3)
// and `avro.apicurio.registry.auto-register=true`. One converter pair per file, on a fresh registry per run. A
// record whose conversion throws gets a line {"topic", "error"} (the exception), then the converters are made
// again (a failed Connect task restarted) and the record converted again (a second failure ends the run).
// Run: java -Dce=... -cp <converter, serde and Debezium jars...> ApicurioCloudEvents.java REGISTRY_URL OUT_DIR IN
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.debezium.converters.CloudEventsConverter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;
import org.apache.kafka.connect.data.Field;
import org.apache.kafka.connect.data.Schema.Type;
import org.apache.kafka.connect.data.SchemaAndValue;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.json.JsonConverter;

public class ApicurioCloudEvents {
    public static void main(String[] args) throws Exception {
        int status = 1;
        try {
            run(args);
            status = 0;
        } catch (Throwable e) {
            e.printStackTrace();
        } finally {  // the registry client's Vert.x threads would keep the JVM alive
            System.exit(status);
        }
    }

    static JsonNode get(ObjectMapper mapper, HttpClient http, String url) throws Exception {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(url)).build(),
            HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
        return mapper.readTree(r.body());
    }

    static CloudEventsConverter[] converters(Map<String, Object> conf) {
        CloudEventsConverter keys = new CloudEventsConverter();
        keys.configure(conf, true);
        CloudEventsConverter values = new CloudEventsConverter();
        values.configure(conf, false);
        return new CloudEventsConverter[] {keys, values};
    }

    // The record's key and value through the key's and the value's converter: {"topic", "key", "value"} (hex).
    static ObjectNode convert(ObjectMapper mapper, JsonConverter json, CloudEventsConverter[] pair, String topic,
            JsonNode rec) throws Exception {
        ObjectNode out = mapper.createObjectNode();
        out.put("topic", topic);
        for (String side : new String[] {"key", "value"}) {
            JsonNode node = rec.get(side);
            SchemaAndValue sv = node == null || node.isNull() ? SchemaAndValue.NULL
                : json.toConnectData(topic, mapper.writeValueAsBytes(node));
            if (node != null) restoreNonFinite(sv.value(), node.get("payload"));
            byte[] bytes = pair[side.equals("key") ? 0 : 1].fromConnectData(topic, sv.schema(), sv.value());
            out.put(side, bytes == null ? null : HexFormat.of().formatHex(bytes));
        }
        return out;
    }

    static void run(String[] args) throws Exception {
        ObjectMapper mapper = new ObjectMapper();
        JsonConverter json = new JsonConverter();
        json.configure(Map.of("schemas.enable", "true", "converter.type", "value"));
        String v3 = args[0] + "/apis/registry/v3";
        Map<String, Object> conf = new HashMap<>();
        conf.put("avro.apicurio.registry.url", v3);
        conf.put("avro.apicurio.registry.auto-register", "true");
        for (String extra : System.getProperty("ce", "").split(",")) {
            if (!extra.isBlank()) conf.put(extra.split("=", 2)[0], extra.split("=", 2)[1]);
        }
        CloudEventsConverter[] pair = converters(conf);
        HttpClient http = HttpClient.newHttpClient();
        Path in = Path.of(args[2]);
        StringBuilder lines = new StringBuilder();
        long known = 0;
        for (String line : Files.readAllLines(in)) {
            if (line.isBlank()) continue;
            JsonNode rec = mapper.readTree(line);
            String topic = rec.get("topic").asText();
            if (topic.startsWith("__debezium-heartbeat")) continue;
            ObjectNode out;
            try {
                out = convert(mapper, json, pair, topic, rec);
            } catch (RuntimeException e) {  // a Connect task fails, and is restarted with new converters
                ObjectNode failed = mapper.createObjectNode().put("topic", topic).put("error", e.toString());
                lines.append(mapper.writeValueAsString(failed)).append('\n');
                pair = converters(conf);
                out = convert(mapper, json, pair, topic, rec);  // failing again after a restart ends the run
            }
            ObjectNode schemas = out.putObject("schemas");
            while (true) {  // content ids are handed out in order: the new ones since the last record
                HttpResponse<String> r = http.send(HttpRequest.newBuilder(
                    URI.create(v3 + "/ids/contentIds/" + (known + 1))).build(),
                    HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
                if (r.statusCode() != 200) break;
                known++;
                schemas.put(Long.toString(known), r.body());
            }
            lines.append(mapper.writeValueAsString(out)).append('\n');
        }
        Path outDir = Path.of(args[1]);
        String name = in.getFileName().toString();
        Files.writeString(outDir.resolve(name), lines.toString());
        ObjectNode artifacts = mapper.createObjectNode();
        for (JsonNode a : get(mapper, http, v3 + "/groups/default/artifacts?limit=1000").get("artifacts")) {
            String id = a.get("artifactId").asText();
            var versions = artifacts.putArray(id);
            for (JsonNode v : get(mapper, http, v3 + "/groups/default/artifacts/" + id + "/versions?limit=1000")
                    .get("versions")) {
                String version = v.get("version").asText();
                ObjectNode entry = versions.addObject().put("version", version)
                    .put("contentId", v.get("contentId").asLong()).put("globalId", v.get("globalId").asLong())
                    .put("artifactType", v.get("artifactType").asText());
                String at = v3 + "/groups/default/artifacts/" + id + "/versions/" + version;
                entry.put("content", http.send(HttpRequest.newBuilder(URI.create(at + "/content")).build(),
                    HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8)).body());
                entry.set("references", get(mapper, http, at + "/references"));
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
                java.util.List<Object> items = (java.util.List<Object>) struct.get(f);
                for (int i = 0; i < n.size(); i++) {
                    Object item = restored(n.get(i), f.schema().valueSchema().type());
                    if (item != null) items.set(i, item);
                }
            }
        }
    }
}
