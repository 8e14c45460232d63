package io.lockstep.test.starter;

import java.io.IOException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;
import org.junit.platform.launcher.listeners.TestExecutionSummary;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

/**
 * {@code docs/testing.md}, "Testing your application": every Java block compiled as
 * printed, next to the application it describes ({@code ShopApplication} and an
 * {@code OrderService} with a locked {@code place} and an unlocked {@code browse}), then
 * run as the tests they are, through the JUnit Platform launcher: all of them pass.
 */
class ReadmeTestingSnippetsTests {

	private static final String SECTION = "# Testing your application";

	@Test
	void everyJavaBlockCompilesAsPrintedAndItsTestsPass(@TempDir Path dir) throws Exception {
		List<String> blocks = javaBlocks(Files.readString(Path.of("..", "docs", "testing.md")), SECTION);
		assertThat(blocks).hasSize(2);
		Path sources = Files.createDirectories(dir.resolve("src/com/example/shop"));
		List<Path> files = new ArrayList<>();
		List<String> testClasses = new ArrayList<>();
		for (String block : blocks) {
			String name = className(block);
			testClasses.add("com.example.shop." + name);
			files.add(Files.writeString(sources.resolve(name + ".java"), block));
		}
		files.add(Files.writeString(sources.resolve("ShopApplication.java"), """
				package com.example.shop;

				import org.springframework.boot.autoconfigure.SpringBootApplication;

				@SpringBootApplication
				public class ShopApplication {

				}
				"""));
		files.add(Files.writeString(sources.resolve("OrderService.java"), """
				package com.example.shop;

				import io.lockstep.DistributedLock;

				import org.springframework.stereotype.Service;

				@Service
				public class OrderService {

					@DistributedLock(key = "#orderId", name = "orders")
					public void place(String orderId) {
					}

					public void browse(String orderId) {
					}

				}
				"""));
		Path classes = Files.createDirectories(dir.resolve("classes"));
		compile(files, classes);

		TestExecutionSummary summary = run(classes, testClasses);
		System.out.printf(
				"docs/testing.md: %d Java blocks compiled; their tests: %d found, " + "%d passed, %d failed%n",
				blocks.size(), summary.getTestsFoundCount(), summary.getTestsSucceededCount(),
				summary.getTotalFailureCount());
		assertThat(summary.getFailures()).extracting((failure) -> failure.getException().toString()).isEmpty();
		assertThat(summary.getTestsSucceededCount()).isEqualTo(3);
	}

	private static void compile(List<Path> files, Path classes) throws IOException {
		JavaCompiler compiler = ToolProvider.getSystemJavaCompiler();
		DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
		try (StandardJavaFileManager fileManager = compiler.getStandardFileManager(diagnostics, null, null)) {
			boolean compiled = compiler
				.getTask(null, fileManager, diagnostics,
						List.of("-proc:none", "-parameters", "-d", classes.toString(), "-classpath",
								System.getProperty("java.class.path")),
						null, fileManager.getJavaFileObjectsFromPaths(files))
				.call();
			assertThat(diagnostics.getDiagnostics())
				.filteredOn((diagnostic) -> diagnostic.getKind() == Diagnostic.Kind.ERROR)
				.isEmpty();
			assertThat(compiled).isTrue();
		}
	}

	private static TestExecutionSummary run(Path classes, List<String> testClasses) throws Exception {
		Thread thread = Thread.currentThread();
		ClassLoader previous = thread.getContextClassLoader();
		try (URLClassLoader loader = new URLClassLoader(new URL[] { classes.toUri().toURL() },
				ReadmeTestingSnippetsTests.class.getClassLoader())) {
			thread.setContextClassLoader(loader);
			List<Class<?>> loaded = new ArrayList<>();
			for (String name : testClasses) {
				loaded.add(loader.loadClass(name));
			}
			LauncherDiscoveryRequest request = LauncherDiscoveryRequestBuilder.request()
				.selectors(loaded.stream().map((type) -> selectClass(type)).toList())
				.build();
			SummaryGeneratingListener listener = new SummaryGeneratingListener();
			LauncherFactory.create().execute(request, listener);
			return listener.getSummary();
		}
		finally {
			thread.setContextClassLoader(previous);
		}
	}

	private static String className(String block) {
		int at = block.indexOf("\nclass ");
		assertThat(at).as("a test class in the block:%n%s", block).isPositive();
		int from = at + "\nclass ".length();
		return block.substring(from, block.indexOf(' ', from));
	}

	/** The {@code java} code blocks of one section ({@code ## } heading to the next). */
	private static List<String> javaBlocks(String readme, String heading) {
		int start = readme.indexOf(heading + "\n");
		assertThat(start).as("section %s", heading).isNotNegative();
		int end = readme.indexOf("\n## ", start + heading.length());
		String section = readme.substring(start, (end >= 0) ? end : readme.length());
		List<String> blocks = new ArrayList<>();
		int from = 0;
		while ((from = section.indexOf("```java\n", from)) >= 0) {
			int close = section.indexOf("\n```", from);
			blocks.add(section.substring(from + "```java\n".length(), close + 1));
			from = close + 4;
		}
		return blocks;
	}

}
