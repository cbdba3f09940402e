-- +goose Up
CREATE TABLE card_types (
  id BIGINT NOT NULL AUTO_INCREMENT,
  name VARCHAR(100) NOT NULL,
  vram_gib INT NOT NULL,
  tflops_fp32 DOUBLE NOT NULL DEFAULT 0,
  tflops_tf32 DOUBLE NOT NULL DEFAULT 0,
  tflops_bf16 DOUBLE NOT NULL DEFAULT 0,
  tflops_fp16 DOUBLE NOT NULL DEFAULT 0,
  tflops_fp8 DOUBLE NOT NULL DEFAULT 0,
  tflops_int8 DOUBLE NOT NULL DEFAULT 0,
  price_fen BIGINT NOT NULL,
  created_at DATETIME(6) NOT NULL,
  updated_at DATETIME(6) NOT NULL,
  PRIMARY KEY (id),
  UNIQUE KEY uq_card_types_name (name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE hosts (
  id BIGINT NOT NULL AUTO_INCREMENT,
  name VARCHAR(100) NOT NULL,
  zone VARCHAR(100) NOT NULL DEFAULT '',
  created_at DATETIME(6) NOT NULL,
  updated_at DATETIME(6) NOT NULL,
  PRIMARY KEY (id),
  UNIQUE KEY uq_hosts_name (name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE cards (
  id BIGINT NOT NULL AUTO_INCREMENT,
  uuid VARCHAR(64) NOT NULL,
  gpu_index INT NOT NULL,
  host_id BIGINT NOT NULL,
  card_type_id BIGINT NOT NULL,
  status VARCHAR(16) NOT NULL,
  created_at DATETIME(6) NOT NULL,
  updated_at DATETIME(6) NOT NULL,
  PRIMARY KEY (id),
  UNIQUE KEY uq_cards_uuid (uuid),
  KEY ix_cards_host (host_id),
  KEY ix_cards_card_type (card_type_id),
  CONSTRAINT fk_cards_host FOREIGN KEY (host_id) REFERENCES hosts (id),
  CONSTRAINT fk_cards_card_type FOREIGN KEY (card_type_id) REFERENCES card_types (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE images (
  id BIGINT NOT NULL AUTO_INCREMENT,
  name VARCHAR(100) NOT NULL,
  reference VARCHAR(255) NOT NULL,
  cuda_version VARCHAR(32) NOT NULL DEFAULT '',
  frameworks VARCHAR(255) NOT NULL DEFAULT '',
  description VARCHAR(500) NOT NULL DEFAULT '',
  created_at DATETIME(6) NOT NULL,
  updated_at DATETIME(6) NOT NULL,
  PRIMARY KEY (id),
  UNIQUE KEY uq_images_name (name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- +goose Down
DROP TABLE images;
DROP TABLE cards;
DROP TABLE hosts;
DROP TABLE card_types;
