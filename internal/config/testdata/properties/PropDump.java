// PropDump prints the key/value pairs java.util.Properties reads from a file,
// one JSON object per line, sorted by key. It produces the golden *.golden
// files next to it; config's tests compare readProperties against them.
//
// Regenerate with: java PropDump.java tricky.properties > tricky.golden
import java.io.FileInputStream;
import java.io.InputStreamReader;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.util.Properties;
import java.util.TreeSet;

public class PropDump {
    public static void main(String[] args) throws Exception {
        Properties p = new Properties();
        try (Reader r = new InputStreamReader(new FileInputStream(args[0]), StandardCharsets.UTF_8)) {
            p.load(r);
        }
        for (String k : new TreeSet<>(p.stringPropertyNames())) {
            System.out.println("{\"key\":" + quote(k) + ",\"value\":" + quote(p.getProperty(k)) + "}");
        }
    }

    static String quote(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '"' || c == '\\') {
                b.append('\\').append(c);
            } else if (c < 0x20 || c > 0x7e) {
                b.append(String.format("\\u%04x", (int) c));
            } else {
                b.append(c);
            }
        }
        return b.append('"').toString();
    }
}
