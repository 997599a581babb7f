// Apicurio Registry's own AvroConverter (apicurio-registry-utils-converter) as a Kafka Connect worker runs it, on
// the records of oracle JSONL files, against a running Apicurio Registry: each key and value (JsonConverter's
// {schema, payload} JSON, as Debezium's engine wrote it) goes back to Connect data through Kafka's JsonConverter,
// then through the key's and then the value's AvroConverter with the record's Kafka headers, as
// WorkerSourceTask.convertTransformedRecord calls them.
// Writes OUT_DIR/<IN> with one JSON line per record: {"topic", "key", "value"} (hex, null for null), "headers"
// ([[name, hex]...] the converters added) and "schemas", then OUT_DIR/<IN minus .jsonl>.artifacts.json, as
// ApicurioRecording.java describes (which also restarts the converters after a record whose conversion throws,
// after an "error" line).
// The converter options: -Dconv=name=value,... (without the `apicurio.registry.` prefix) over `url`
// (REGISTRY_URL/apis/registry/v3) and `auto-register=true`. One converter pair per file, a fresh registry per run.
// Run: java -Dconv=... -cp <ApicurioRecording's classes, converter and serde jars, Kafka...> ApicurioAvro.java
//     REGISTRY_URL OUT_DIR IN
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.apicurio.registry.utils.converter.AvroConverter;
import java.nio.file.Path;
import java.util.HexFormat;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.connect.data.SchemaAndValue;

public class ApicurioAvro {
    public static void main(String[] args) {
        ApicurioRecording.exitAfter(() -> {
            ApicurioRecording rec = new ApicurioRecording(args[0]);
            rec.record(conf -> {
                AvroConverter keys = new AvroConverter();
                keys.configure(conf, true);
                AvroConverter values = new AvroConverter();
                values.configure(conf, false);
                return (topic, record) -> {
                    ObjectNode out = rec.mapper.createObjectNode();
                    out.put("topic", topic);
                    RecordHeaders headers = new RecordHeaders();
                    for (String side : new String[] {"key", "value"}) {
                        SchemaAndValue sv = rec.toConnect(topic, record.get(side));
                        byte[] bytes = (side.equals("key") ? keys : values).fromConnectData(topic, headers,
                            sv.schema(), sv.value());
                        out.put(side, bytes == null ? null : HexFormat.of().formatHex(bytes));
                    }
                    var added = out.putArray("headers");
                    for (Header h : headers) added.addArray().add(h.key()).add(HexFormat.of().formatHex(h.value()));
                    return out;
                };
            }, rec.options("apicurio.registry.", "conv", "apicurio.registry."), Path.of(args[1]), Path.of(args[2]));
        });
    }
}
