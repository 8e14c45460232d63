package io.lockstep.autoconfigure;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The README and the pages of {@code docs/} hold together: every relative link leads to a
 * file that exists and every {@code #anchor} to a heading of the page it names (GitHub's
 * anchors), and the table of {@code docs/properties.md} lists every {@code lockstep.*}
 * property of the configuration metadata this module generates, and no other.
 */
class DocumentationTests {

	private static final Path ROOT = Path.of("..");

	/** {@code [text](target)}; the target has no spaces (titles are not used here). */
	private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s]+)\\)");

	private static final Pattern PROPERTY = Pattern.compile("`(lockstep\\.[a-z0-9.<>*-]+)`");

	@Test
	void everyRelativeLinkAndAnchorOfTheReadmeAndTheDocsResolves() throws IOException {
		List<Path> pages = pages();
		List<String> broken = new ArrayList<>();
		Map<Path, Set<String>> anchors = new HashMap<>();
		int links = 0;
		int anchored = 0;
		for (Path page : pages) {
			for (String target : links(Files.readString(page, StandardCharsets.UTF_8))) {
				if (target.matches("^[a-z][a-z0-9+.-]*:.*")) {
					continue; // https:, mailto:: not checked here
				}
				links++;
				int hash = target.indexOf('#');
				String file = (hash >= 0) ? target.substring(0, hash) : target;
				Path linked = file.isEmpty() ? page : page.getParent().resolve(file).normalize();
				if (!Files.exists(linked)) {
					broken.add(ROOT.relativize(page) + ": " + target + " (no such file)");
					continue;
				}
				if (hash < 0) {
					continue;
				}
				anchored++;
				String anchor = target.substring(hash + 1);
				if (!linked.toString().endsWith(".md")) {
					broken.add(ROOT.relativize(page) + ": " + target + " (an anchor into a file that is not Markdown)");
					continue;
				}
				Set<String> headings = anchors.computeIfAbsent(linked, DocumentationTests::anchors);
				if (!headings.contains(anchor)) {
					broken.add(ROOT.relativize(page) + ": " + target + " (no heading '#" + anchor + "' in "
							+ ROOT.relativize(linked) + ")");
				}
			}
		}
		System.out.printf(
				"README.md and docs/*.md: %d pages, %d relative links, %d of them with an anchor, %d broken%n",
				pages.size(), links, anchored, broken.size());
		assertThat(broken).isEmpty();
		assertThat(pages).hasSizeGreaterThan(10);
		assertThat(anchored).isPositive();
	}

	/** The table's first column: one property a row, each of the metadata's, no other. */
	@Test
	void thePropertiesPageNamesEveryLockstepPropertyAndNoOther() throws IOException {
		Set<String> metadata = metadataProperties();
		Set<String> documented = new TreeSet<>();
		for (String line : Files.readAllLines(ROOT.resolve("docs/properties.md"), StandardCharsets.UTF_8)) {
			Matcher property = PROPERTY.matcher(line);
			if (line.startsWith("| `lockstep.") && property.find()) {
				documented.add(property.group(1).replace("<name>", "*"));
			}
		}
		System.out.printf("docs/properties.md's table has %d lockstep.* properties; the metadata lists %d%n",
				documented.size(), metadata.size());
		assertThat(documented).as("documented in docs/properties.md").containsAll(metadata);
		assertThat(metadata).as("in the configuration metadata").containsAll(documented);
	}

	/**
	 * The {@code lockstep.*} properties of the configuration metadata generated for this
	 * module (the map {@code lockstep.locks} by the entries of one name,
	 * {@code lockstep.locks.*.wait-time}, ...).
	 */
	private static Set<String> metadataProperties() throws IOException {
		String json;
		try (InputStream in = LockstepProperties.class
			.getResourceAsStream("/META-INF/spring-configuration-metadata.json")) {
			assertThat(in).as("META-INF/spring-configuration-metadata.json of lock-autoconfigure").isNotNull();
			json = new String(in.readAllBytes(), StandardCharsets.UTF_8);
		}
		int from = json.indexOf("\"properties\"");
		int to = json.indexOf("\"hints\"", from);
		String properties = json.substring(from, (to >= 0) ? to : json.length());
		Set<String> names = new TreeSet<>();
		Matcher name = Pattern.compile("\"name\"\\s*:\\s*\"(lockstep\\.[^\"]+)\"").matcher(properties);
		while (name.find()) {
			names.add(name.group(1));
		}
		if (names.stream().anyMatch((each) -> each.startsWith("lockstep.locks.*."))) {
			names.remove("lockstep.locks");
		}
		assertThat(names).contains("lockstep.wait-time", "lockstep.locks.*.wait-time");
		return names;
	}

	/** README.md and every page of docs/. */
	private static List<Path> pages() throws IOException {
		List<Path> pages = new ArrayList<>();
		pages.add(ROOT.resolve("README.md"));
		try (Stream<Path> docs = Files.list(ROOT.resolve("docs"))) {
			docs.filter((path) -> path.toString().endsWith(".md")).sorted().forEach(pages::add);
		}
		return pages;
	}

	/** The targets of the inline links of a page, outside code blocks and code spans. */
	static List<String> links(String markdown) {
		List<String> targets = new ArrayList<>();
		boolean fenced = false;
		for (String line : markdown.split("\n", -1)) {
			if (line.startsWith("```")) {
				fenced = !fenced;
				continue;
			}
			if (fenced || line.startsWith("    ")) {
				continue;
			}
			Matcher link = LINK.matcher(withoutCodeSpans(line));
			while (link.find()) {
				targets.add(link.group(1));
			}
		}
		return targets;
	}

	/** A line with its code spans blanked, keeping links whose text is code. */
	private static String withoutCodeSpans(String line) {
		return line.replaceAll("`[^`]*`(?!\\]\\()", "``");
	}

	/**
	 * The anchors GitHub gives the headings of a page: lower case, punctuation but
	 * {@code -} and {@code _} dropped, spaces as {@code -}, and {@code -1}, {@code -2}
	 * ... for repeated ones.
	 */
	static Set<String> anchors(Path page) {
		Set<String> anchors = new LinkedHashSet<>();
		Map<String, Integer> seen = new HashMap<>();
		boolean fenced = false;
		try {
			for (String line : Files.readAllLines(page, StandardCharsets.UTF_8)) {
				if (line.startsWith("```")) {
					fenced = !fenced;
				}
				if (fenced || !line.matches("^#{1,6} .*")) {
					continue;
				}
				String slug = slug(line.replaceFirst("^#{1,6} ", ""));
				int count = seen.merge(slug, 1, Integer::sum);
				anchors.add((count == 1) ? slug : slug + "-" + (count - 1));
			}
		}
		catch (IOException ex) {
			throw new IllegalStateException("Cannot read " + page, ex);
		}
		return anchors;
	}

	static String slug(String heading) {
		return heading.strip().toLowerCase(Locale.ROOT).replaceAll("[^\\p{L}\\p{N}\\s_-]", "").replace(' ', '-');
	}

}
