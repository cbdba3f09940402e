-- +goose Up
-- A task's versioned files: its card-hour plan, scripts and configs. The
-- content lives in object storage; these rows are the trail: which version,
-- by whom, when and why. Paths compare case-sensitively, as file systems and
-- object stores do.
CREATE TABLE task_files (
  id BIGINT NOT NULL AUTO_INCREMENT,
  task_id BIGINT NOT NULL,
  path VARCHAR(500) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  latest_no INT NOT NULL DEFAULT 0,
  latest_size BIGINT NOT NULL DEFAULT 0,
  created_at DATETIME(6) NOT NULL,
  updated_at DATETIME(6) NOT NULL,
  PRIMARY KEY (id),
  UNIQUE KEY uq_task_files_task_path (task_id, path),
  CONSTRAINT fk_task_files_task FOREIGN KEY (task_id) REFERENCES tasks (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- One row per version, never changed or deleted: a rollback is a new row.
-- object_key and version_id find the content in the object store; sha256
-- lets a reader check what it got back.
CREATE TABLE task_file_versions (
  id BIGINT NOT NULL AUTO_INCREMENT,
  file_id BIGINT NOT NULL,
  task_id BIGINT NOT NULL,
  version_no INT NOT NULL,
  object_key VARCHAR(1024) NOT NULL,
  version_id VARCHAR(255) NOT NULL,
  size_bytes BIGINT NOT NULL,
  sha256 CHAR(64) NOT NULL,
  author_id BIGINT NULL,
  author_name VARCHAR(100) NOT NULL,
  message VARCHAR(500) NOT NULL DEFAULT '',
  source VARCHAR(16) NOT NULL,
  restored_from INT NULL,
  created_at DATETIME(6) NOT NULL,
  PRIMARY KEY (id),
  UNIQUE KEY uq_task_file_versions_no (file_id, version_no),
  KEY ix_task_file_versions_file_time (file_id, created_at),
  KEY ix_task_file_versions_task_time (task_id, created_at),
  KEY ix_task_file_versions_author (author_id),
  CONSTRAINT fk_task_file_versions_file FOREIGN KEY (file_id) REFERENCES task_files (id),
  CONSTRAINT fk_task_file_versions_task FOREIGN KEY (task_id) REFERENCES tasks (id),
  CONSTRAINT fk_task_file_versions_author FOREIGN KEY (author_id) REFERENCES users (id) ON DELETE SET NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- +goose Down
DROP TABLE task_file_versions;
DROP TABLE task_files;
