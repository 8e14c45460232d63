package io.lockstep.sample;

import java.util.List;
import java.util.Map;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Repository;

/**
 * Products with their stock, and the orders placed against them (H2).
 */
@Repository
class InventoryRepository {

	private final JdbcClient jdbc;

	InventoryRepository(JdbcClient jdbc) {
		this.jdbc = jdbc;
	}

	List<Product> products() {
		return this.jdbc.sql("SELECT sku, name, stock FROM product ORDER BY sku").query(Product.class).list();
	}

	int stock(String sku) {
		return this.jdbc.sql("SELECT stock FROM product WHERE sku = ?")
			.param(sku)
			.query(Integer.class)
			.optional()
			.orElseThrow(() -> new UnknownProductException(sku));
	}

	void setStock(String sku, int stock) {
		this.jdbc.sql("UPDATE product SET stock = ? WHERE sku = ?").params(stock, sku).update();
	}

	void addOrder(String sku, int quantity, String status, String instance, long fencingToken) {
		this.jdbc.sql("INSERT INTO orders (sku, quantity, status, instance, fencing_token) VALUES (?, ?, ?, ?, ?)")
			.params(sku, quantity, status, instance, fencingToken)
			.update();
	}

	void deleteOrders(String sku) {
		this.jdbc.sql("DELETE FROM orders WHERE sku = ?").param(sku).update();
	}

	/** Order counts by status for one product. */
	Map<String, Integer> orderCounts(String sku) {
		Map<String, Integer> counts = new java.util.TreeMap<>(Map.of("ACCEPTED", 0, "REJECTED", 0));
		this.jdbc.sql("SELECT status, COUNT(*) AS n FROM orders WHERE sku = ? GROUP BY status")
			.param(sku)
			.query((rs, row) -> Map.entry(rs.getString("status"), rs.getInt("n")))
			.list()
			.forEach((entry) -> counts.put(entry.getKey(), entry.getValue()));
		return counts;
	}

}
