package io.lockstep;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The engine and the stores stay easy to read: no class over {@value #MAX_CLASS_LINES}
 * lines of code (javadoc, comments and blank lines are not counted) unless it says why
 * (the style guide: "one over 300 needs a reason"), no method over
 * {@value #MAX_METHOD_LINES} lines, and no method, constructor or record with more than
 * {@value #MAX_PARAMETERS} parameters (a value instead of an argument train).
 */
class CodeSizeTests {

	private static final int MAX_CLASS_LINES = 300;

	private static final int MAX_METHOD_LINES = 60;

	private static final int MAX_PARAMETERS = 6;

	/** The engine, the stores and their wake-up channels. */
	private static final List<String> PACKAGES = List.of("io/lockstep/internal/engine", "io/lockstep/internal/redis",
			"io/lockstep/redlock", "io/lockstep/local");

	/** A method or constructor declaration's first line. */
	private static final Pattern DECLARATION = Pattern.compile(
			"^\\t+(?:@\\w+\\s+)*" + "(?:(?:public|protected|private|static|final|synchronized|abstract|default)\\s+)*"
					+ "(?:<[^>]+>\\s+)?(?:[\\w.<>\\[\\], ?]+\\s+)?\\w+\\((?!.*\\s=\\s).*$");

	private static final Pattern NOT_A_DECLARATION = Pattern
		.compile("^\\t+(?:return|new|if|for|while|switch|catch|else|throw|synchronized\\s*\\(|try|do|this|super)\\b.*");

	/**
	 * A name followed by a parenthesis: a method or constructor declared, or a call; a
	 * record's header ({@code record Name(} or {@code record Name<T>(}).
	 */
	private static final Pattern NAME_AND_PARENTHESIS = Pattern
		.compile("(\\brecord\\s+)?\\b([A-Za-z_$][\\w$]*)\\s*(<[^(){};=]*>)?\\s*\\(");

	/** A type's type arguments at the end of a text: {@code <String, List<Long>>}. */
	private static final Pattern GENERIC_TYPE_END = Pattern.compile("\\w\\s*<[\\w\\s,.?<>\\[\\]@]*>$");

	private static final Pattern LAST_WORD = Pattern.compile("([\\w$]+)$");

	/** Words before a name and a parenthesis that make it a call or a statement. */
	private static final Set<String> NOT_A_TYPE = Set.of("new", "return", "throw", "else", "case", "yield", "assert",
			"do", "if", "for", "while", "switch", "catch", "synchronized", "try");

	/**
	 * The classes over {@value #MAX_CLASS_LINES} lines of code, each with the reason it
	 * is one class (the style guide: "one over 300 needs a reason"); a class listed here
	 * that fits again must leave the list.
	 */
	private static final Map<String, String> LONG_FOR_A_REASON = Map.of( //
			"LocalQueues.java",
			"one monitor, one invariant: the queues, the keys listened to and the unclaimed hand-offs change together",
			"RedisStore.java",
			"the one seam to Redis: every call the engine makes, a script per slot group, on its two connections",
			"Acquisition.java",
			"the protocol's vocabulary and every transition in one file, which the exploration tests check whole");

	/**
	 * Files whose declarations may still take more than {@value #MAX_PARAMETERS}
	 * parameters, each with its reason; a file listed here that fits must leave the list.
	 */
	private static final Map<String, String> TRAINS_FOR_A_REASON = Map.of();

	@Test
	void noEngineOrStoreClassOrMethodIsTooLong() throws IOException {
		List<String> tooLong = new ArrayList<>();
		int files = 0;
		int methods = 0;
		for (Path path : sources()) {
			files++;
			List<String> lines = Files.readAllLines(path);
			String name = path.getFileName().toString();
			long code = codeLines(String.join("\n", lines));
			if (code > MAX_CLASS_LINES && !LONG_FOR_A_REASON.containsKey(name)) {
				tooLong.add(name + ": " + code + " lines of code, and no reason given");
			}
			if (code <= MAX_CLASS_LINES && LONG_FOR_A_REASON.containsKey(name)) {
				tooLong.add(name + ": " + code + " lines of code, listed as long: take it off the list");
			}
			methods += longMethods(path, lines, tooLong);
		}
		System.out.printf(
				"code size: %d files and %d methods of %s -> over %d lines of code per class or %d lines per method: %s%n",
				files, methods, PACKAGES, MAX_CLASS_LINES, MAX_METHOD_LINES, tooLong);
		assertThat(files).isGreaterThan(30);
		assertThat(tooLong).isEmpty();
	}

	@Test
	void noEngineOrStoreDeclarationTakesMoreThanSixParameters() throws IOException {
		List<String> trains = new ArrayList<>();
		int files = 0;
		int declarations = 0;
		for (Path path : sources()) {
			files++;
			String name = path.getFileName().toString();
			Map<String, Integer> counts = parameterCounts(Files.readString(path));
			declarations += counts.size();
			List<String> over = counts.entrySet()
				.stream()
				.filter((entry) -> entry.getValue() > MAX_PARAMETERS)
				.map((entry) -> name + ": " + entry.getKey() + " takes " + entry.getValue())
				.toList();
			if (!TRAINS_FOR_A_REASON.containsKey(name)) {
				trains.addAll(over);
			}
			else if (over.isEmpty()) {
				trains.add(name + ": listed for its parameter trains, and has none: take it off the list");
			}
		}
		System.out.printf("parameters: %d declarations in %d files of %s -> over %d parameters: %s (listed: %s)%n",
				declarations, files, PACKAGES, MAX_PARAMETERS, trains, TRAINS_FOR_A_REASON.keySet());
		assertThat(declarations).isGreaterThan(500);
		assertThat(trains).isEmpty();
	}

	@Test
	void theParameterCountSeesRecordsAndDeclarationsOverSeveralLinesButNotCalls() {
		String source = """
				/** A (javadoc, with, commas, in, it, and, more). */
				record Terms(String key, long wait, long lease, boolean renewed,
						long minHold, @Nullable Object onTimeout, Map<String, List<Long>> fences) implements Cloneable {
				}
				final class Engine {
					private final Runnable task = () -> call(1, 2, 3, 4, 5, 6, 7);
					Engine(String a, String b) throws Exception {
						this(a, b, "c, d, e, f, g, (h");
						call(1, 2, 3, 4, 5, 6, 7);
						new Engine(a, b, a, b, a, b, a);
					}
					static <T> List<T> granted(T a, T b, T c, T d, T e, T f, T g) {
						return List.of(a, b, c, d, e, f, g); // a(1, 2, 3, 4, 5, 6, 7)
					}
					void handedOff(String key, long token, long lease);
				}
				""";
		assertThat(parameterCounts(source)).containsExactlyInAnyOrderEntriesOf(
				Map.of("record Terms:2", 7, "Engine:7", 2, "granted:12", 7, "handedOff:15", 3));
	}

	/** The Java files of the measured packages. */
	private static List<Path> sources() throws IOException {
		List<Path> sources = new ArrayList<>();
		for (String pkg : PACKAGES) {
			try (Stream<Path> paths = Files.list(Path.of("src/main/java", pkg))) {
				paths.filter((p) -> p.toString().endsWith(".java")).sorted().forEach(sources::add);
			}
		}
		return sources;
	}

	/** The lines that hold code, not only comments or blanks. */
	private static long codeLines(String source) {
		return code(source).lines().filter((line) -> !line.isBlank()).count();
	}

	/**
	 * The parameters of each method, constructor and record the source declares, by
	 * {@code "name:line"} ({@code "record Name:line"} for a record's components).
	 */
	static Map<String, Integer> parameterCounts(String source) {
		String code = code(source);
		Map<String, Integer> counts = new LinkedHashMap<>();
		Matcher matcher = NAME_AND_PARENTHESIS.matcher(code);
		while (matcher.find()) {
			boolean record = matcher.group(1) != null;
			int open = matcher.end() - 1;
			int close = closing(code, open);
			if (close < 0 || (!record && !declares(code, matcher.start(2), close))) {
				continue;
			}
			long line = code.substring(0, matcher.start(2)).chars().filter((c) -> c == '\n').count() + 1;
			counts.put((record ? "record " : "") + matcher.group(2) + ":" + line,
					parameters(code.substring(open + 1, close)));
		}
		return counts;
	}

	/**
	 * Whether the name at {@code start} is declared, not called: after a type or a
	 * modifier (not a keyword, a dot, an arrow or an operator), a body, a {@code throws}
	 * clause or a semicolon follows its parameters; at the start of a statement (a
	 * constructor), a body or a {@code throws} clause.
	 */
	private static boolean declares(String code, int start, int close) {
		String before = code.substring(0, start).stripTrailing();
		String after = code.substring(close + 1).stripLeading();
		boolean body = after.startsWith("{") || after.startsWith("throws");
		char last = before.isEmpty() ? ';' : before.charAt(before.length() - 1);
		if (last == ';' || last == '{' || last == '}' || last == ')') {
			return body && !before.endsWith("->");
		}
		boolean type = Character.isJavaIdentifierPart(last) || last == ']'
				|| (last == '>' && GENERIC_TYPE_END.matcher(before).find());
		if (!type) {
			return false;
		}
		Matcher word = LAST_WORD.matcher(before);
		if (word.find() && NOT_A_TYPE.contains(word.group(1))) {
			return false;
		}
		return body || after.startsWith(";");
	}

	/** The index of the parenthesis that closes the one at {@code open}, or -1. */
	private static int closing(String code, int open) {
		int depth = 0;
		for (int i = open; i < code.length(); i++) {
			char c = code.charAt(i);
			depth += (c == '(') ? 1 : (c == ')') ? -1 : 0;
			if (depth == 0) {
				return i;
			}
		}
		return -1;
	}

	/** The parameters in a list: its commas outside brackets, plus one. */
	private static int parameters(String list) {
		if (list.isBlank()) {
			return 0;
		}
		int depth = 0;
		int count = 1;
		for (char c : list.toCharArray()) {
			if (c == '<' || c == '(' || c == '[' || c == '{') {
				depth++;
			}
			else if (c == '>' || c == ')' || c == ']' || c == '}') {
				depth--;
			}
			else if (c == ',' && depth == 0) {
				count++;
			}
		}
		return count;
	}

	/**
	 * The source without its comments and with its string and character literals emptied;
	 * line breaks kept, so that lines keep their numbers.
	 */
	private static String code(String source) {
		StringBuilder code = new StringBuilder(source.length());
		int i = 0;
		while (i < source.length()) {
			char c = source.charAt(i);
			if (source.startsWith("/*", i)) {
				int end = source.indexOf("*/", i + 2);
				end = (end < 0) ? source.length() : end + 2;
				source.substring(i, end).chars().filter((ch) -> ch == '\n').forEach((ch) -> code.append('\n'));
				i = end;
			}
			else if (source.startsWith("//", i)) {
				int end = source.indexOf('\n', i);
				i = (end < 0) ? source.length() : end;
			}
			else if (c == '"' || c == '\'') {
				String quote = source.startsWith("\"\"\"", i) ? "\"\"\"" : String.valueOf(c);
				int end = i + quote.length();
				while (end < source.length() && !source.startsWith(quote, end)) {
					end += (source.charAt(end) == '\\') ? 2 : 1;
				}
				end = Math.min(end + quote.length(), source.length());
				code.append(quote);
				source.substring(i, end).chars().filter((ch) -> ch == '\n').forEach((ch) -> code.append('\n'));
				code.append(quote);
				i = end;
			}
			else {
				code.append(c);
				i++;
			}
		}
		return code.toString();
	}

	/** Adds the methods over the limit; returns how many methods it measured. */
	private static int longMethods(Path path, List<String> lines, List<String> tooLong) {
		int methods = 0;
		for (int i = 0; i < lines.size(); i++) {
			String line = lines.get(i);
			if (!DECLARATION.matcher(line).matches() || NOT_A_DECLARATION.matcher(line).matches()
					|| line.trim().startsWith("*")) {
				continue;
			}
			int open = i;
			while (open < lines.size() && !lines.get(open).contains("{") && !lines.get(open).contains(";")) {
				open++;
			}
			if (open == lines.size() || !lines.get(open).contains("{")) {
				continue;
			}
			int depth = 0;
			int end = open;
			for (; end < lines.size(); end++) {
				depth += count(lines.get(end), '{') - count(lines.get(end), '}');
				if (depth <= 0) {
					break;
				}
			}
			methods++;
			if (end - i + 1 > MAX_METHOD_LINES) {
				tooLong.add(path.getFileName() + ":" + (i + 1) + " " + line.trim() + " " + (end - i + 1) + " lines");
			}
			i = end;
		}
		return methods;
	}

	private static int count(String line, char c) {
		int n = 0;
		for (int i = 0; i < line.length(); i++) {
			n += (line.charAt(i) == c) ? 1 : 0;
		}
		return n;
	}

}
