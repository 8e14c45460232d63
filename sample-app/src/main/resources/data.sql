MERGE INTO product (sku, name, stock) KEY (sku) VALUES ('lamp', 'Desk lamp', 50);
MERGE INTO product (sku, name, stock) KEY (sku) VALUES ('chair', 'Office chair', 20);
MERGE INTO product (sku, name, stock) KEY (sku) VALUES ('mug', 'Coffee mug', 5);
