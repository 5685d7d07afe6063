import java.time.Instant;
import java.time.ZoneId;
import java.time.zone.ZoneOffsetTransition;
import java.time.zone.ZoneRules;
import java.time.zone.ZoneRulesProvider;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Locale;
import java.util.TimeZone;
import java.util.TreeSet;

/**
 * Prints what Java knows of time-zone names, for internal/javatime.
 *
 * <p>{@code java JavaZones names} prints "# TAB Java's version TAB its tz
 * database's version", then, for every zone of ZoneId.getAvailableZoneIds(),
 * "zone TAB standard TAB daylight": the short names java.util.Date.toString
 * prints for the zone (TimeZone.getDisplayName(daylight, SHORT, Locale.US)).
 * internal/gen turns them into zonenames.go.
 *
 * <p>{@code java JavaZones dates} prints, for every zone, "zone TAB millis TAB
 * offset TAB start TAB end TAB Date.toString()" with the zone as the default
 * time zone, at mid-January and mid-July of several years and on both sides
 * of the zone's first two transitions of 2026. offset is the zone's UTC
 * offset at that instant in seconds (TimeZone.getOffset), and start and end
 * bound, in Unix seconds, the period of that offset around the instant: the
 * zone's offset transitions just before (or at) and just after it, "-" where
 * there is none. With them a test can tell where its own tz database differs
 * from Java's. internal/gen writes them into testdata/java-dates.txt, which
 * the test compares with javatime.Date.
 */
public class JavaZones {
    static final int[] YEARS = {1970, 2000, 2026, 2030};

    public static void main(String[] args) {
        if (args.length != 1 || !(args[0].equals("names") || args[0].equals("dates"))) {
            System.err.println("usage: java JavaZones names|dates");
            System.exit(2);
        }
        StringBuilder out = new StringBuilder();
        if (args[0].equals("names")) {
            out.append("#\t").append(System.getProperty("java.runtime.version")).append('\t')
                    .append(String.join(",", ZoneRulesProvider.getVersions("UTC").keySet())).append('\n');
        }
        for (String id : new TreeSet<>(ZoneId.getAvailableZoneIds())) {
            TimeZone tz = TimeZone.getTimeZone(id);
            if (!tz.getID().equals(id)) {
                throw new IllegalStateException("TimeZone.getTimeZone(" + id + ") is " + tz.getID());
            }
            if (args[0].equals("names")) {
                out.append(id).append('\t')
                        .append(tz.getDisplayName(false, TimeZone.SHORT, Locale.US)).append('\t')
                        .append(tz.getDisplayName(true, TimeZone.SHORT, Locale.US)).append('\n');
                continue;
            }
            TimeZone.setDefault(tz);
            ZoneRules rules = ZoneId.of(id).getRules();
            for (long ms : instants(rules)) {
                // previousTransition is strictly before its argument.
                ZoneOffsetTransition start = rules.previousTransition(Instant.ofEpochMilli(ms + 1));
                ZoneOffsetTransition end = rules.nextTransition(Instant.ofEpochMilli(ms));
                out.append(id).append('\t').append(ms).append('\t').append(tz.getOffset(ms) / 1000)
                        .append('\t').append(start == null ? "-" : Long.toString(start.toEpochSecond()))
                        .append('\t').append(end == null ? "-" : Long.toString(end.toEpochSecond()))
                        .append('\t').append(new Date(ms)).append('\n');
            }
        }
        System.out.print(out);
        System.out.flush();
    }

    /** instants returns the times at which a zone's names are checked. */
    static List<Long> instants(ZoneRules rules) {
        List<Long> ms = new ArrayList<>();
        for (int year : YEARS) {
            ms.add(Instant.parse(year + "-01-15T12:00:00Z").toEpochMilli());
            ms.add(Instant.parse(year + "-07-15T12:00:00Z").toEpochMilli());
        }
        Instant from = Instant.parse("2026-01-01T00:00:00Z");
        for (int i = 0; i < 2; i++) {
            ZoneOffsetTransition tr = rules.nextTransition(from);
            if (tr == null || tr.getInstant().isAfter(Instant.parse("2027-01-01T00:00:00Z"))) {
                break;
            }
            ms.add(tr.getInstant().toEpochMilli() - 1000);
            ms.add(tr.getInstant().toEpochMilli());
            from = tr.getInstant();
        }
        return ms;
    }
}
