package io.lockstep.sample;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * The REST API: products, single orders, the concurrency demo and a summary for the page.
 */
@RestController
@RequestMapping("/api")
class InventoryController {

	private final InventoryService inventory;

	private final InventoryRepository repository;

	private final OrderDemo demo;

	private final StockReportJob report;

	InventoryController(InventoryService inventory, InventoryRepository repository, OrderDemo demo,
			StockReportJob report) {
		this.inventory = inventory;
		this.repository = repository;
		this.demo = demo;
		this.report = report;
	}

	@GetMapping("/products")
	List<Product> products() {
		return this.repository.products();
	}

	/**
	 * A product's stock, read under its read lock (see
	 * {@link InventoryService#stockLevel}).
	 */
	@GetMapping("/products/{sku}/stock")
	int stock(@PathVariable String sku) {
		return this.inventory.stockLevel(sku);
	}

	record OrderRequest(String sku, int quantity) {
	}

	@PostMapping("/orders")
	OrderResult order(@RequestBody OrderRequest request) {
		return this.inventory.placeOrder(request.sku(), Math.max(1, request.quantity()), "web");
	}

	@PostMapping("/demo")
	OrderDemo.DemoResult demo(@RequestParam(defaultValue = "lamp") String sku,
			@RequestParam(defaultValue = "200") int orders, @RequestParam(defaultValue = "50") int stock,
			@RequestParam(defaultValue = "4") int instances, @RequestParam(defaultValue = "true") boolean locked)
			throws Exception {
		return this.demo.run(sku, orders, stock, instances, locked);
	}

	@GetMapping("/summary")
	Map<String, Object> summary(@RequestParam(defaultValue = "lamp") String sku) {
		Map<String, Object> summary = new LinkedHashMap<>();
		summary.put("sku", sku);
		summary.put("stock", this.repository.stock(sku));
		summary.put("orders", this.repository.orderCounts(sku));
		summary.put("reportRuns", this.report.runs());
		summary.put("lastDemo", this.demo.last());
		return summary;
	}

}
