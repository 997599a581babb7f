// Confluent's JsonSchemaConverter (7.0.16) on the records of an oracle JSONL file: each key and value
// (JsonConverter's {schema, payload} JSON, as Debezium's engine wrote it) goes back to Connect data through
// Kafka's JsonConverter, then through `new JsonSchemaConverter(MockSchemaRegistryClient)` configured with the
// options given, as a Connect worker's converter would: fromConnectData registers the schema JsonSchemaData
// derives and writes magic byte, id and the JSON payload.
// Writes OUT_DIR/<name of IN> with one JSON line per record: {"topic", "key_schema", "key", "value_schema",
// "value"}: the schema text registered under the id in the bytes, the bytes after the id as text (UTF-8 JSON),
// or `<side>_error`: the root cause of the exception fromConnectData throws.
// Run: java -cp <JsonSchemaConverter 7.0.16 classes and their dependencies> \
//          ConfluentJsonSchemaData.java OUT_DIR [key=value options ...] -- IN...
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.confluent.connect.json.JsonSchemaConverter;
import io.confluent.kafka.schemaregistry.client.MockSchemaRegistryClient;
import io.confluent.kafka.schemaregistry.json.JsonSchemaProvider;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.connect.data.Field;
import org.apache.kafka.connect.data.Schema.Type;
import org.apache.kafka.connect.data.SchemaAndValue;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.json.JsonConverter;

public class ConfluentJsonSchemaData {
    public static void main(String[] args) throws Exception {
        ObjectMapper mapper = new ObjectMapper();
        JsonConverter json = new JsonConverter();
        json.configure(Map.of("schemas.enable", "true", "converter.type", "value"));
        Map<String, Object> options = new HashMap<>();
        options.put("schema.registry.url", "http://registry.invalid");
        int i = 1;
        for (; i < args.length && !args[i].equals("--"); i++) {
            String[] kv = args[i].split("=", 2);
            options.put(kv[0], kv[1]);
        }
        MockSchemaRegistryClient client = new MockSchemaRegistryClient(List.of(new JsonSchemaProvider()));
        JsonSchemaConverter key = new JsonSchemaConverter(client);
        key.configure(options, true);
        JsonSchemaConverter value = new JsonSchemaConverter(client);
        value.configure(options, false);
        for (i++; i < args.length; i++) {
            Path in = Path.of(args[i]);
            StringBuilder lines = new StringBuilder();
            convert(mapper, json, client, key, value, in, lines);
            Files.writeString(Path.of(args[0]).resolve(in.getFileName()), lines.toString());
        }
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

    static Throwable root(Throwable e) {
        while (e.getCause() != null && e.getCause() != e) e = e.getCause();
        return e;
    }

    static void convert(ObjectMapper mapper, JsonConverter json, MockSchemaRegistryClient client,
                        JsonSchemaConverter key, JsonSchemaConverter value, Path in, StringBuilder lines)
            throws Exception {
        for (String line : Files.readAllLines(in)) {
            if (line.isBlank()) continue;
            JsonNode rec = mapper.readTree(line);
            String topic = rec.get("topic").asText();
            if (topic.startsWith("__debezium-heartbeat")) continue;
            ObjectNode out = mapper.createObjectNode();
            out.put("topic", topic);
            for (String side : new String[] {"key", "value"}) {
                JsonNode node = rec.get(side);
                if (node == null || node.isNull()) {
                    out.putNull(side + "_schema");
                    out.putNull(side);
                    continue;
                }
                SchemaAndValue sv = json.toConnectData(topic, mapper.writeValueAsBytes(node));
                restoreNonFinite(sv.value(), node.get("payload"));
                byte[] bytes;
                try {
                    bytes = (side.equals("key") ? key : value).fromConnectData(topic, sv.schema(), sv.value());
                } catch (RuntimeException e) {  // a worker fails its task here: the reason is the result
                    Throwable r = root(e);
                    out.put(side + "_error", r.getClass().getName() + ": " + r.getMessage());
                    continue;
                }
                if (bytes == null) {  // a null value: no bytes, nothing registered
                    out.putNull(side + "_schema");
                    out.putNull(side);
                    continue;
                }
                int id = ByteBuffer.wrap(bytes, 1, 4).getInt();
                out.put(side + "_schema", client.getSchemaById(id).canonicalString());
                out.put(side, new String(Arrays.copyOfRange(bytes, 5, bytes.length), StandardCharsets.UTF_8));
            }
            lines.append(mapper.writeValueAsString(out)).append('\n');
        }
    }
}
