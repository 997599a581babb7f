// Apicurio Registry's own ExtJsonConverter (apicurio-registry-utils-converter) on the records of oracle JSONL files,
// against a running Apicurio Registry: each key and value (JsonConverter's {schema, payload} JSON, as Debezium's
// engine wrote it) goes back to Connect data through Kafka's JsonConverter, then through
// ExtJsonConverter.fromConnectData, which registers the schema (auto-register) and writes the record.
// Writes OUT_DIR/<IN> with one JSON line per record: {"topic", "key", "key_schema", "value",
// "value_schema"}: the record's text (null for null) and the schema text the registry holds under the content id
// the record names. One converter pair per run, so a schema already registered by an earlier file is found again.
// Run: java -cp <converter, serde, resolver, java-sdk jars...> ApicurioExtJson.java REGISTRY_URL OUT_DIR IN...
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.apicurio.registry.utils.converter.ExtJsonConverter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.connect.data.Field;
import org.apache.kafka.connect.data.Schema.Type;
import org.apache.kafka.connect.data.SchemaAndValue;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.json.JsonConverter;

public class ApicurioExtJson {
    public static void main(String[] args) throws Exception {
        int status = 1;
        try {
            run(args);
            status = 0;
        } finally {  // the registry client's Vert.x threads would keep the JVM alive
            System.exit(status);
        }
    }

    static void run(String[] args) throws Exception {
        ObjectMapper mapper = new ObjectMapper();
        JsonConverter json = new JsonConverter();
        json.configure(Map.of("schemas.enable", "true", "converter.type", "value"));
        Map<String, Object> conf = new HashMap<>();
        conf.put("apicurio.registry.url", args[0] + "/apis/registry/v3");
        conf.put("apicurio.registry.auto-register", "true");
        for (String extra : System.getProperty("extra", "").split(",")) {  // -Dextra=name=value,... (more options)
            if (!extra.isBlank()) conf.put(extra.split("=", 2)[0], extra.split("=", 2)[1]);
        }
        ExtJsonConverter keys = new ExtJsonConverter();
        keys.configure(conf, true);
        ExtJsonConverter values = new ExtJsonConverter();
        values.configure(conf, false);
        HttpClient http = HttpClient.newHttpClient();
        for (int i = 2; i < args.length; i++) {
            Path in = Path.of(args[i]);
            StringBuilder lines = new StringBuilder();
            for (String line : Files.readAllLines(in)) {
                if (line.isBlank()) continue;
                JsonNode rec = mapper.readTree(line);
                String topic = rec.get("topic").asText();
                if (topic.startsWith("__debezium-heartbeat")) continue;
                ObjectNode out = mapper.createObjectNode();
                out.put("topic", topic);
                for (String side : new String[] {"key", "value"}) {
                    JsonNode node = rec.get(side);
                    SchemaAndValue sv = node == null || node.isNull() ? SchemaAndValue.NULL
                        : json.toConnectData(topic, mapper.writeValueAsBytes(node));
                    if (node != null) restoreNonFinite(sv.value(), node.get("payload"));
                    byte[] bytes = (side.equals("key") ? keys : values).fromConnectData(topic, sv.schema(), sv.value());
                    if (bytes == null) {
                        out.putNull(side);
                        out.putNull(side + "_schema");
                        continue;
                    }
                    long id = mapper.readTree(bytes).get("schemaId").asLong();
                    HttpResponse<String> schema = http.send(HttpRequest.newBuilder(
                        URI.create(args[0] + "/apis/registry/v3/ids/contentIds/" + id)).build(),
                        HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
                    out.put(side, new String(bytes, StandardCharsets.UTF_8));
                    out.put(side + "_schema", schema.body());
                }
                lines.append(mapper.writeValueAsString(out)).append('\n');
            }
            Path target = Path.of(args[1]).resolve(args[i]);
            Files.createDirectories(target.getParent());
            Files.writeString(target, lines.toString());
        }
        keys.close();
        values.close();
    }

    // JsonConverter writes NaN and the infinities as JSON strings and reads a string back into a FLOAT32/FLOAT64
    // field as 0: the SourceRecord held the non-finite value, so put it back.
    static void restoreNonFinite(Object value, JsonNode payload) {
        if (!(value instanceof Struct) || payload == null) return;
        Struct struct = (Struct) value;
        for (Field f : struct.schema().fields()) {
            JsonNode n = payload.get(f.name());
            if (n == null || n.isNull()) continue;
            Type t = f.schema().type();
            if (n.isTextual() && t == Type.FLOAT64) struct.put(f, Double.valueOf(n.asText()));
            else if (n.isTextual() && t == Type.FLOAT32) struct.put(f, Float.valueOf(n.asText()));
            else if (t == Type.STRUCT) restoreNonFinite(struct.get(f), n);
        }
    }
}
