-- +goose Up
-- A task's versioned files: its card-hour plan, scripts and configs. The
-- content lives in object storage; these rows are the trail: which version,
-- by whom, when and why. Paths compare case-sensitively, as file systems and
-- object stores do.
CREATE TABLE task_files (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  task_id BIGINT NOT NULL,
  path TEXT NOT NULL,
  latest_no INT NOT NULL DEFAULT 0,
  latest_size BIGINT NOT NULL DEFAULT 0,
  created_at DATETIME NOT NULL,
  updated_at DATETIME NOT NULL,
  FOREIGN KEY (task_id) REFERENCES tasks (id)
);
CREATE UNIQUE INDEX uq_task_files_task_path ON task_files (task_id, path);

-- One row per version, never changed or deleted: a rollback is a new row.
-- object_key and version_id find the content in the object store; sha256
-- lets a reader check what it got back.
CREATE TABLE task_file_versions (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  file_id BIGINT NOT NULL,
  task_id BIGINT NOT NULL,
  version_no INT NOT NULL,
  object_key TEXT NOT NULL,
  version_id TEXT NOT NULL,
  size_bytes BIGINT NOT NULL,
  sha256 TEXT NOT NULL,
  author_id BIGINT NULL,
  author_name TEXT NOT NULL,
  message TEXT NOT NULL DEFAULT '',
  source TEXT NOT NULL,
  restored_from INT NULL,
  created_at DATETIME NOT NULL,
  FOREIGN KEY (file_id) REFERENCES task_files (id),
  FOREIGN KEY (task_id) REFERENCES tasks (id),
  FOREIGN KEY (author_id) REFERENCES users (id) ON DELETE SET NULL
);
CREATE UNIQUE INDEX uq_task_file_versions_no ON task_file_versions (file_id, version_no);
CREATE INDEX ix_task_file_versions_file_time ON task_file_versions (file_id, created_at);
CREATE INDEX ix_task_file_versions_task_time ON task_file_versions (task_id, created_at);
CREATE INDEX ix_task_file_versions_author ON task_file_versions (author_id);

-- +goose Down
DROP TABLE task_file_versions;
DROP TABLE task_files;
