package io.lockstep.redis;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The ACL recipe of {@code docs/redis-acl.md}, "Running under a Redis ACL user", read
 * from the page itself, so that the tests run the text users copy: the
 * {@code ACL SETUSER} command (an indented block, lines joined at their trailing
 * backslash), the rules the table describes, and the Cluster additions.
 */
public final class AclRecipe {

	/** What the page's command starts with; the rules follow. */
	public static final List<String> PREFIX = List.of("ACL", "SETUSER", "app", "on", ">secret");

	/** The page's user and password. */
	public static final String USER = "app";

	public static final String PASSWORD = "secret";

	/** The page, from the project's root. */
	static final String PAGE = "docs/redis-acl.md";

	private static final String HEADING = "# Running under a Redis ACL user";

	private static final Pattern CLUSTER = Pattern.compile("On a Cluster add `([^`]+)`");

	private static volatile String page;

	private AclRecipe() {
	}

	/** The page's {@code ACL SETUSER} command as written, split at whitespace. */
	public static List<String> command() {
		List<String> lines = section().lines().toList();
		StringBuilder command = new StringBuilder();
		for (int i = 0; i < lines.size(); i++) {
			if (lines.get(i).startsWith("    ACL SETUSER ")) {
				for (int j = i; j < lines.size(); j++) {
					String line = lines.get(j).strip();
					boolean continued = line.endsWith("\\");
					command.append(continued ? line.substring(0, line.length() - 1) : line).append(' ');
					if (!continued) {
						break;
					}
				}
				break;
			}
		}
		if (command.isEmpty()) {
			throw new IllegalStateException(PAGE + ": no indented 'ACL SETUSER' line under '" + HEADING + "'");
		}
		List<String> tokens = Arrays.asList(command.toString().strip().split("\\s+"));
		if (!tokens.subList(0, Math.min(PREFIX.size(), tokens.size())).equals(PREFIX)) {
			throw new IllegalStateException(PAGE + ": the ACL command should start with " + PREFIX + ": " + tokens);
		}
		return tokens;
	}

	/** The rules of the page's command: everything after {@link #PREFIX}. */
	public static List<String> rules() {
		List<String> command = command();
		return new ArrayList<>(command.subList(PREFIX.size(), command.size()));
	}

	/**
	 * The rules the page's table describes (the backquoted words of its first column).
	 */
	public static Set<String> describedRules() {
		Set<String> described = new LinkedHashSet<>();
		for (String line : section().lines().toList()) {
			if (line.startsWith("| `")) {
				String first = line.substring(1, line.indexOf('|', 1));
				Matcher quoted = Pattern.compile("`([^`]+)`").matcher(first);
				while (quoted.find()) {
					described.add(quoted.group(1));
				}
			}
		}
		return described;
	}

	/** The page's additions for a Cluster. */
	public static List<String> clusterAdditions() {
		Matcher matcher = CLUSTER.matcher(section());
		if (!matcher.find()) {
			throw new IllegalStateException(PAGE + ": no 'On a Cluster add `...`' on the page");
		}
		return Arrays.asList(matcher.group(1).strip().split("\\s+"));
	}

	private static String section() {
		String text = page();
		int start = text.indexOf(HEADING + "\n");
		if (start < 0) {
			throw new IllegalStateException(PAGE + " has no '" + HEADING + "' heading");
		}
		int end = text.indexOf("\n#", start + 1);
		return text.substring(start, (end < 0) ? text.length() : end);
	}

	private static String page() {
		String text = page;
		if (text == null) {
			text = read(locate());
			page = text;
		}
		return text;
	}

	/**
	 * The page in the project: under the working directory or the nearest parent with a
	 * mvnw.
	 */
	private static Path locate() {
		for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
			if (Files.isRegularFile(dir.resolve(PAGE)) && Files.isRegularFile(dir.resolve("mvnw"))) {
				return dir.resolve(PAGE);
			}
		}
		throw new IllegalStateException(
				"No " + PAGE + " next to mvnw in " + Path.of("").toAbsolutePath() + " or any parent directory");
	}

	private static String read(Path path) {
		try {
			return Files.readString(path, StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot read " + path, ex);
		}
	}

}
