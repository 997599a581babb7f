// Apicurio Registry's own AvroData (apicurio-registry-utils-converter) on the records of an oracle JSONL file:
// each key and value (JsonConverter's {schema, payload} JSON, as Debezium's engine wrote it) goes back to
// Connect data through Kafka's JsonConverter, then through AvroData.fromConnectSchema/fromConnectData as
// Apicurio's AvroConverter does, and the Avro binary its serializer writes (GenericDatumWriter).
// Writes OUT_DIR/<name of IN> with one JSON line per record: {"topic", "key_schema", "key", "value_schema",
// "value"} (hex bytes, null for null), or `<side>_error`: the message a schema Avro refuses fails with.
// Run: java -cp <converter jar>:<avro, connect-api, connect-json, kafka-clients, jackson, slf4j> \
//          ApicurioAvroData.java OUT_DIR IN...
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.apicurio.registry.utils.converter.avro.AvroData;
import io.apicurio.registry.utils.converter.avro.AvroDataConfig;
import java.io.ByteArrayOutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.EncoderFactory;
import org.apache.kafka.connect.data.Field;
import org.apache.kafka.connect.data.Schema.Type;
import org.apache.kafka.connect.data.SchemaAndValue;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.json.JsonConverter;

public class ApicurioAvroData {
    public static void main(String[] args) throws Exception {
        ObjectMapper mapper = new ObjectMapper();
        JsonConverter json = new JsonConverter();
        json.configure(Map.of("schemas.enable", "true", "converter.type", "value"));
        AvroData avro = new AvroData(new AvroDataConfig(Map.of()));
        for (int i = 1; i < args.length; i++) {
            Path in = Path.of(args[i]);
            StringBuilder lines = new StringBuilder();
            convert(mapper, json, avro, in, lines);
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

    static void convert(ObjectMapper mapper, JsonConverter json, AvroData avro, Path in, StringBuilder lines)
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
                Schema schema;
                try {
                    schema = avro.fromConnectSchema(sv.schema());
                } catch (RuntimeException e) {  // the converter fails the record: its message is the result
                    out.put(side + "_error", e.getMessage());
                    continue;
                }
                Object datum = avro.fromConnectData(sv.schema(), sv.value());
                ByteArrayOutputStream bytes = new ByteArrayOutputStream();
                BinaryEncoder enc = EncoderFactory.get().directBinaryEncoder(bytes, null);
                new GenericDatumWriter<Object>(schema).write(datum, enc);
                enc.flush();
                out.put(side + "_schema", schema.toString());
                out.put(side, HexFormat.of().formatHex(bytes.toByteArray()));
            }
            lines.append(mapper.writeValueAsString(out)).append('\n');
        }
    }
}
