CREATE TABLE IF NOT EXISTS product (
  sku   VARCHAR(64) PRIMARY KEY,
  name  VARCHAR(200) NOT NULL,
  stock INT NOT NULL
);

CREATE TABLE IF NOT EXISTS orders (
  id            BIGINT AUTO_INCREMENT PRIMARY KEY,
  sku           VARCHAR(64) NOT NULL REFERENCES product (sku),
  quantity      INT NOT NULL,
  status        VARCHAR(16) NOT NULL,
  instance      VARCHAR(64) NOT NULL,
  fencing_token BIGINT NOT NULL,
  created_at    TIMESTAMP DEFAULT CURRENT_TIMESTAMP NOT NULL
);
