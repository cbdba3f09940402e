-- +goose Up
CREATE TABLE card_types (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL COLLATE NOCASE,
  vram_gib INT NOT NULL,
  tflops_fp32 REAL NOT NULL DEFAULT 0,
  tflops_tf32 REAL NOT NULL DEFAULT 0,
  tflops_bf16 REAL NOT NULL DEFAULT 0,
  tflops_fp16 REAL NOT NULL DEFAULT 0,
  tflops_fp8 REAL NOT NULL DEFAULT 0,
  tflops_int8 REAL NOT NULL DEFAULT 0,
  price_fen BIGINT NOT NULL,
  created_at DATETIME NOT NULL,
  updated_at DATETIME NOT NULL
);
CREATE UNIQUE INDEX uq_card_types_name ON card_types (name);

CREATE TABLE hosts (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL COLLATE NOCASE,
  zone TEXT NOT NULL DEFAULT '',
  created_at DATETIME NOT NULL,
  updated_at DATETIME NOT NULL
);
CREATE UNIQUE INDEX uq_hosts_name ON hosts (name);

CREATE TABLE cards (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  uuid TEXT NOT NULL COLLATE NOCASE,
  gpu_index INT NOT NULL,
  host_id BIGINT NOT NULL,
  card_type_id BIGINT NOT NULL,
  status TEXT NOT NULL,
  created_at DATETIME NOT NULL,
  updated_at DATETIME NOT NULL,
  FOREIGN KEY (host_id) REFERENCES hosts (id),
  FOREIGN KEY (card_type_id) REFERENCES card_types (id)
);
CREATE UNIQUE INDEX uq_cards_uuid ON cards (uuid);
CREATE INDEX ix_cards_host ON cards (host_id);
CREATE INDEX ix_cards_card_type ON cards (card_type_id);

CREATE TABLE images (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL COLLATE NOCASE,
  reference TEXT NOT NULL,
  cuda_version TEXT NOT NULL DEFAULT '',
  frameworks TEXT NOT NULL DEFAULT '',
  description TEXT NOT NULL DEFAULT '',
  created_at DATETIME NOT NULL,
  updated_at DATETIME NOT NULL
);
CREATE UNIQUE INDEX uq_images_name ON images (name);

-- +goose Down
DROP TABLE images;
DROP TABLE cards;
DROP TABLE hosts;
DROP TABLE card_types;
