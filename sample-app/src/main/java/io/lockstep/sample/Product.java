package io.lockstep.sample;

/**
 * A product and its stock.
 *
 * @param sku the stock-keeping unit
 * @param name the display name
 * @param stock units left
 */
public record Product(String sku, String name, int stock) {
}
