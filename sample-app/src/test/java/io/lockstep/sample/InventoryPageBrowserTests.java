package io.lockstep.sample;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.function.Function;

import io.lockstep.LockHandle;
import io.lockstep.LockTemplate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.Select;
import org.openqa.selenium.support.ui.WebDriverWait;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.util.FileSystemUtils;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sample application's page in headless Chromium, against a real redis-server
 * process. Needs Debian's {@code chromium} and {@code chromium-driver}
 * ({@code /usr/bin/chromium}, {@code /usr/bin/chromedriver}; other paths through
 * {@code -Dlockstep.test.chromium} and {@code -Dlockstep.test.chromedriver}), so it is
 * tagged {@code browser} and runs only in the {@code browser} Maven profile. Both paths
 * are given explicitly, so Selenium Manager never runs and nothing is downloaded.
 */
@Tag("browser")
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "sample.report-interval=1h", "sample.processing-time=5ms" })
class InventoryPageBrowserTests extends RealRedis {

	private static final Path CHROMIUM = Path.of(System.getProperty("lockstep.test.chromium", "/usr/bin/chromium"));

	private static final Path CHROMEDRIVER = Path
		.of(System.getProperty("lockstep.test.chromedriver", "/usr/bin/chromedriver"));

	private static final Path SCREENSHOTS = Path.of("target", "screenshots");

	private static final Duration DEMO_TIMEOUT = Duration.ofSeconds(60);

	@LocalServerPort
	private int port;

	@Autowired
	private InventoryRepository repository;

	@Autowired
	private LockTemplate locks;

	private Path profile;

	private WebDriver browser;

	@BeforeEach
	void startBrowser() throws IOException {
		assertThat(CHROMIUM).as("Chromium (apt-get install chromium)").isExecutable();
		assertThat(CHROMEDRIVER).as("ChromeDriver (apt-get install chromium-driver)").isExecutable();
		this.profile = Files.createTempDirectory("lockstep-chromium-");
		ChromeOptions options = new ChromeOptions();
		options.setBinary(CHROMIUM.toFile());
		options.addArguments("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
				"--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
				"--window-size=1280,1280", "--user-data-dir=" + this.profile);
		ChromeDriverService service = new ChromeDriverService.Builder().usingDriverExecutable(CHROMEDRIVER.toFile())
			.usingAnyFreePort()
			.build();
		this.browser = new ChromeDriver(service, options);
	}

	@AfterEach
	void stopBrowser() {
		try {
			if (this.browser != null) {
				this.browser.quit();
			}
		}
		finally {
			if (this.profile != null) {
				FileSystemUtils.deleteRecursively(this.profile.toFile());
			}
		}
	}

	@Test
	void thePageRunsTheDemoWithAndWithoutTheLockAndShowsStockOrdersWaitTimesAndHeldLocks() throws IOException {
		this.browser.get("http://127.0.0.1:" + this.port + "/");
		await(Duration.ofSeconds(10), (page) -> page.findElements(By.cssSelector("#product option")).size() == 3);
		Select product = new Select(this.browser.findElement(By.id("product")));
		assertThat(product.getOptions()).extracting(WebElement::getText)
			.containsExactly("Office chair (chair)", "Desk lamp (lamp)", "Coffee mug (mug)");
		assertThat(product.getFirstSelectedOption().getDomAttribute("value")).isEqualTo("lamp");
		String initialStock = String.valueOf(this.repository.stock("lamp"));
		await(Duration.ofSeconds(10), (page) -> text("stock").equals(initialStock));

		click("run-locked");
		await(DEMO_TIMEOUT, (page) -> text("stock").equals("0") && text("accepted").equals("50")
				&& text("oversold").equals("0") && buttonsEnabled());
		assertThat(text("rejected")).isEqualTo("150");
		String picked = product.getFirstSelectedOption().getText();
		assertThat(picked).isEqualTo("Desk lamp (lamp)");
		assertThat(text("result-text")).as("the result names the product as the picker does")
			.startsWith("With the lock on " + picked + ": 50 of 200 orders accepted");
		assertThat(text("chart-caption")).startsWith("200 orders on " + picked + ", with the lock");
		assertThat(barCounts()).as("orders per wait bucket").anyMatch((count) -> count > 0);
		assertThat(barCounts().stream().mapToInt(Integer::intValue).sum()).isEqualTo(200);
		assertThat(text("wait-p50")).endsWith(" ms");
		assertThat(text("wait-max")).endsWith(" ms");
		writeScreenshot("demo-locked.png");

		click("run-unlocked");
		await(DEMO_TIMEOUT, (page) -> text("result-text").startsWith("Without the lock") && buttonsEnabled());
		int oversold = Integer.parseInt(text("oversold"));
		System.out.printf("browser: unlocked demo oversold %d, page says: %s%n", oversold, text("result-text"));
		assertThat(oversold).isPositive();
		assertThat(this.browser.findElement(By.id("oversold-box")).getDomAttribute("class")).contains("bad");
		assertThat(Integer.parseInt(text("accepted"))).isGreaterThan(50);
		assertThat(barCounts()).anyMatch((count) -> count > 0);
		assertThat(text("runs")).contains("With lock " + picked + " 50 of 200 0").contains("Without lock " + picked);

		try (LockHandle lock = this.locks.named("stock").acquire("mug")) {
			await(Duration.ofSeconds(10), (page) -> text("held-locks").contains("lockstep:stock:mug")
					&& text("held-locks").contains(String.valueOf(lock.fencingToken())));
			writeScreenshot("demo.png");
		}
		// released: gone from the page (the leader-only task's lock and the ShedLock
		// job's
		// may be listed beside it)
		await(Duration.ofSeconds(10), (page) -> !text("held-locks").contains("lockstep:stock:mug"));
	}

	private void await(Duration timeout, Function<WebDriver, Boolean> condition) {
		new WebDriverWait(this.browser, timeout, Duration.ofMillis(100)).until(condition);
	}

	private String text(String id) {
		return this.browser.findElement(By.id(id)).getText();
	}

	private void click(String id) {
		this.browser.findElement(By.id(id)).click();
	}

	private boolean buttonsEnabled() {
		return this.browser.findElement(By.id("run-locked")).isEnabled()
				&& this.browser.findElement(By.id("run-unlocked")).isEnabled();
	}

	private List<Integer> barCounts() {
		return this.browser.findElements(By.cssSelector("#wait-chart .bar"))
			.stream()
			.map((bar) -> Integer.valueOf(bar.getDomAttribute("data-count")))
			.toList();
	}

	private void writeScreenshot(String name) throws IOException {
		byte[] png = ((ChromeDriver) this.browser).getScreenshotAs(OutputType.BYTES);
		Path file = SCREENSHOTS.resolve(name);
		Files.createDirectories(SCREENSHOTS);
		Files.write(file, png);
		System.out.printf("browser: screenshot %s (%d bytes)%n", file.toAbsolutePath(), png.length);
	}

}
