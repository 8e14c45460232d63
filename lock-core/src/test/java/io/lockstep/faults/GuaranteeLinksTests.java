package io.lockstep.faults;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code docs/guarantees.md} and {@code docs/topologies.md} link every statement to a
 * test that exists: each linked file exists, each test method a link names
 * ({@code [`Class#method`](path)}) is declared in that file, every statement (a bullet of
 * the sections that make claims) carries such a link, and the README links to both pages.
 */
class GuaranteeLinksTests {

	private static final Path ROOT = Path.of("..");

	private static final Pattern LINK = Pattern.compile("\\[`?([^\\]`]+)`?\\]\\(([^)#\\s]+)(#[^)]*)?\\)");

	@Test
	void everyLinkedTestAndMethodExistsAndEveryStatementLinksATest() throws IOException {
		String page = check("docs/guarantees.md",
				List.of("## What Lockstep guarantees", "## What Lockstep does not guarantee", "## Security"), 20);
		assertThat(page).contains("## Security");
	}

	@Test
	void everyTopologyStatementLinksATestThatExists() throws IOException {
		check("docs/topologies.md", List.of("## One master", "## Sentinel (a master, its replicas, and Sentinels)",
				"## Cluster", "## Redlock (independent masters)", "## Valkey"), 20);
	}

	/**
	 * Checks the links and statements of one page and that the README links to it.
	 * @return the page
	 */
	private static String check(String name, List<String> claimSections, int leastMethods) throws IOException {
		Path file = ROOT.resolve(name);
		String page = Files.readString(file, StandardCharsets.UTF_8);
		List<String> problems = new ArrayList<>();
		int links = 0;
		int methods = 0;
		Matcher link = LINK.matcher(page);
		while (link.find()) {
			Path target = file.getParent().resolve(link.group(2)).normalize();
			if (!link.group(2).endsWith(".java")) {
				continue;
			}
			links++;
			if (!Files.isRegularFile(target)) {
				problems.add("no such file: " + link.group(2));
				continue;
			}
			String text = link.group(1);
			if (text.contains("#")) {
				methods++;
				String type = text.substring(0, text.indexOf('#'));
				String method = text.substring(text.indexOf('#') + 1);
				String source = Files.readString(target, StandardCharsets.UTF_8);
				if (!target.getFileName().toString().equals(type + ".java")) {
					problems.add(text + " links to " + target.getFileName());
				}
				if (!Pattern.compile("\\svoid\\s+" + Pattern.quote(method) + "\\s*\\(").matcher(source).find()) {
					problems.add("no method " + method + " in " + link.group(2));
				}
			}
		}
		List<String> statements = statements(page, claimSections);
		for (String statement : statements) {
			Matcher test = LINK.matcher(statement);
			boolean linksATest = false;
			while (test.find()) {
				linksATest |= test.group(2).contains("src/test/java/") && test.group(2).endsWith("Tests.java")
						|| test.group(2).endsWith("LockContract.java");
			}
			if (!linksATest) {
				problems.add("a statement without a linked test: " + statement.lines().findFirst().orElse(""));
			}
		}
		System.out.printf("%s: %d links to test sources, %d naming a test method, %d statements%n", name, links,
				methods, statements.size());
		assertThat(problems).isEmpty();
		assertThat(methods).isGreaterThan(leastMethods);
		assertThat(sectionsFound(page, claimSections)).as("the sections that make claims, in %s", name)
			.isEqualTo(claimSections.size());
		assertThat(Files.readString(ROOT.resolve("README.md"), StandardCharsets.UTF_8)).contains("(" + name + ")");
		return page;
	}

	private static long sectionsFound(String page, List<String> sections) {
		return page.lines().filter((line) -> sections.contains(line.trim())).count();
	}

	/** The bullets of the sections that make claims, each with its continuation lines. */
	private static List<String> statements(String page, List<String> claimSections) {
		List<String> statements = new ArrayList<>();
		boolean inClaims = false;
		StringBuilder current = null;
		for (String line : page.lines().toList()) {
			if (line.startsWith("## ")) {
				inClaims = claimSections.contains(line.trim());
			}
			boolean bullet = line.startsWith("- ");
			boolean continuation = line.startsWith("  ") && current != null;
			if (current != null && !continuation) {
				statements.add(current.toString());
				current = null;
			}
			if (inClaims && bullet) {
				current = new StringBuilder(line);
			}
			else if (continuation) {
				current.append('\n').append(line);
			}
		}
		if (current != null) {
			statements.add(current.toString());
		}
		return statements;
	}

}
