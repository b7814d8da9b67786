// A random bot for mancala-arena (protocol v1) in Java 11+, standard library
// only; run as `java Bot.java` (no build step). One JSON object per line on
// stdin; one per line on stdout, flushed. A real bot should use a JSON
// parser (Jackson, Gson): this template only scans for the fields it needs
// (the option strings have no escapes).
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

public class Bot {
    static String field(String line, String key) {
        Matcher m = Pattern.compile("\"" + key + "\"\\s*:\\s*\"([^\"]*)\"").matcher(line);
        return m.find() ? m.group(1) : "";
    }

    static List<String> legal(String line) {
        List<String> out = new ArrayList<>();
        Matcher m = Pattern.compile("\"legal\"\\s*:\\s*\\[([^\\]]*)\\]").matcher(line);
        if (m.find()) {
            Matcher s = Pattern.compile("\"([^\"]*)\"").matcher(m.group(1));
            while (s.find()) out.add(s.group(1));
        }
        return out;
    }

    // Picks one legal option: replace this with your bot.
    static String choose(List<String> options, Random rng) {
        return options.get(rng.nextInt(options.size()));
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, "UTF-8"));
        PrintStream out = new PrintStream(System.out, false, "UTF-8");
        Random rng = new Random();
        String line;
        while ((line = in.readLine()) != null) {
            String type = field(line, "type");
            if (type.equals("hello")) {
                out.println("{\"type\":\"hello\",\"name\":\"template-java\",\"version\":\"1.0\"}");
            } else if (type.equals("game_start")) {
                // Seed from the referee's seed: the same seed, the same game.
                String seed = field(line, "seed");
                Matcher seat = Pattern.compile("\"seat\"\\s*:\\s*(\\d+)").matcher(line);
                long s = seat.find() ? Long.parseLong(seat.group(1)) : 0;
                if (!seed.isEmpty()) rng = new Random(Long.parseUnsignedLong(seed) ^ (s * 0x9e3779b97f4a7c15L));
                continue;
            } else if (type.equals("request")) {
                List<String> options = legal(line);
                if (options.isEmpty()) continue;
                out.println("{\"type\":\"reply\",\"option\":\"" + choose(options, rng) + "\"}");
            } else if (type.equals("quit")) {
                return;
            } else {
                continue; // game_end and unknown types: nothing to answer
            }
            out.flush();
        }
    }
}
