// Debezium's CloudEventsConverter (debezium-connect-plugins) delegating to Apicurio Registry's own AvroConverter
// (apicurio-registry-utils-converter), as Debezium chooses it for `avro.apicurio.registry.url`, on the records of
// oracle JSONL files, against a running Apicurio Registry: each value (JsonConverter's {schema, payload} JSON, as
// Debezium's engine wrote it) goes back to Connect data through Kafka's JsonConverter, then through the key's and
// the value's CloudEventsConverter, which instantiates and configures Apicurio's AvroConverter itself.
// Writes OUT_DIR/<IN> with one JSON line per record: {"topic", "key", "value"} (hex, null for null) and
// "schemas", then OUT_DIR/<IN minus .jsonl>.artifacts.json, as ApicurioRecording.java describes (which also
// restarts the converters after a record whose conversion throws, after an "error" line).
// The converter options: -Dce=name=value,... over `avro.apicurio.registry.url` (REGISTRY_URL/apis/registry/v3)
// and `avro.apicurio.registry.auto-register=true`. One converter pair per file, on a fresh registry per run.
// Run: java -Dce=... -cp <ApicurioRecording's classes, converter, serde and Debezium jars...>
//     ApicurioCloudEvents.java REGISTRY_URL OUT_DIR IN
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.debezium.converters.CloudEventsConverter;
import java.nio.file.Path;
import java.util.HexFormat;
import org.apache.kafka.connect.data.SchemaAndValue;

public class ApicurioCloudEvents {
    public static void main(String[] args) {
        ApicurioRecording.exitAfter(() -> {
            ApicurioRecording rec = new ApicurioRecording(args[0]);
            rec.record(conf -> {
                CloudEventsConverter keys = new CloudEventsConverter();
                keys.configure(conf, true);
                CloudEventsConverter values = new CloudEventsConverter();
                values.configure(conf, false);
                return (topic, record) -> {
                    ObjectNode out = rec.mapper.createObjectNode();
                    out.put("topic", topic);
                    for (String side : new String[] {"key", "value"}) {
                        SchemaAndValue sv = rec.toConnect(topic, record.get(side));
                        byte[] bytes = (side.equals("key") ? keys : values).fromConnectData(topic, sv.schema(),
                            sv.value());
                        out.put(side, bytes == null ? null : HexFormat.of().formatHex(bytes));
                    }
                    return out;
                };
            }, rec.options("avro.apicurio.registry.", "ce", ""), Path.of(args[1]), Path.of(args[2]));
        });
    }
}
