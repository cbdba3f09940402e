// Package store keeps cardhour's records through gorm on SQLite (the
// embedded default) or a MySQL-compatible server (Tianyi RDS for MySQL,
// TeleDB, MariaDB). The schema comes only from the SQL migrations; gorm here
// maps rows, it never creates tables. Every driver error leaves this package
// as a coded errs.Error.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"gorm.io/driver/mysql"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"cardhour/errs"
)

// Dialects the store speaks.
const (
	SQLite = "sqlite"
	MySQL  = "mysql"
)

// Store is the handle on the database. It is safe for concurrent use.
type Store struct {
	db      *gorm.DB
	sqlDB   *sql.DB
	dialect string
	now     func() time.Time
	policy  BookingPolicy
	writeMu sync.Mutex
	books   bookKeep // the card types' placement books (booking_books.go)
	// batches queues booking requests per card type (booking_batch.go).
	batches bookingBatches
	// consecutiveIDs: a multi-row insert's ids are consecutive, so a batch
	// may insert its bookings in one statement.
	consecutiveIDs bool
	// sessionReadCommitted: every MySQL connection opens in read committed
	// (mysqlSession), so a transaction need not ask for it.
	sessionReadCommitted bool
	log                  *slog.Logger
	// stop ends the background work (the SQLite checkpointer) on Close.
	stop       chan struct{}
	stopOnce   sync.Once
	background sync.WaitGroup
	// tokenUse remembers when this process last recorded each API token's
	// use (token id → time), so concurrent requests record it once.
	tokenUse sync.Map
	// delivery says how notices beyond the bell go out (notify_outbox.go).
	delivery Delivery
	// tokenCache remembers recent token lookups, cardLabels the names of
	// the cards bookings were given (ttl_cache.go).
	tokenCache ttlCache[string, cachedToken]
	cardLabels ttlCache[string, AssignedCard]
	// onChange is told of committed changes others may cache (changes.go).
	onChange changeHook
	// txRetries counts the transactions run again after a collision: the
	// tests read it to know that their writes really collided.
	txRetries atomic.Int64
}

// Options says which database to open.
type Options struct {
	Dialect string // SQLite or MySQL
	// DSN is a file path for SQLite, a go-sql-driver DSN for MySQL.
	DSN    string
	Logger *slog.Logger
	// Now replaces the clock in tests.
	Now func() time.Time
}

// Open connects without touching the schema; call Migrate next.
func Open(ctx context.Context, o Options) (*Store, error) {
	const op = "store.Open"
	var dialector gorm.Dialector
	switch o.Dialect {
	case SQLite:
		if dir := filepath.Dir(o.DSN); dir != "" {
			if err := os.MkdirAll(dir, 0o750); err != nil {
				return nil, errs.Wrap(errs.Internal, op, fmt.Errorf("create data dir: %w", err))
			}
		}
		dialector = sqliteDialector{dsn: sqliteDSN(o.DSN)}
	case MySQL:
		dsn, err := mysqlDSN(o.DSN)
		if err != nil {
			return nil, errs.Wrap(errs.Invalid, op, err)
		}
		dialector = mysql.New(mysql.Config{DSN: dsn, DefaultStringSize: 255})
	default:
		return nil, errs.Internalf(op, "unknown dialect %q", o.Dialect)
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	// Microseconds are what MySQL DATETIME(6) keeps (MySQL rounds the rest,
	// MariaDB truncates); cutting them here makes a time read back equal the
	// time written on every dialect.
	clock := func() time.Time { return now().UTC().Truncate(time.Microsecond) }
	cfg := &gorm.Config{
		Logger:                                   logger.Discard,
		SkipDefaultTransaction:                   true,
		DisableForeignKeyConstraintWhenMigrating: true,
		// gorm stamps updated_at itself on Save; it must read the store's
		// clock, or Options.Now would not govern every stored time.
		NowFunc: clock,
	}
	db, err := gorm.Open(dialector, cfg)
	if err != nil {
		return nil, translate(op, err)
	}
	sqlDB, err := db.DB()
	if err != nil {
		return nil, translate(op, err)
	}
	if o.Dialect == SQLite {
		// One writer at a time is SQLite's rule; a small pool keeps readers
		// concurrent under WAL without piling up busy writers.
		sqlDB.SetMaxOpenConns(4)
		// Keep them all: a closed connection loses its prepared statements.
		sqlDB.SetMaxIdleConns(4)
	} else {
		mysqlPool(sqlDB)
	}
	s := &Store{db: db, sqlDB: sqlDB, dialect: o.Dialect, now: clock, policy: DefaultBookingPolicy(), log: o.Logger,
		books:      bookKeep{books: map[int64]*typeBook{}},
		tokenCache: newTTLCache[string, cachedToken](tokenCacheTTL, tokenCacheMax),
		cardLabels: newTTLCache[string, AssignedCard](cardLabelTTL, cardLabelMax)}
	if err := s.Ping(ctx); err != nil {
		_ = sqlDB.Close()
		return nil, err
	}
	if o.Dialect == MySQL {
		if err := s.mysqlSession(ctx, o.DSN, cfg); err != nil {
			_ = s.sqlDB.Close()
			return nil, err
		}
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if o.Dialect == SQLite {
		s.stop = make(chan struct{})
		s.background.Add(1)
		go s.checkpointWAL()
	}
	// SQLite numbers the rows of one insert one after another: it has one
	// writer at a time.
	s.consecutiveIDs = o.Dialect == SQLite || consecutiveInsertIDs(ctx, s.sqlDB)
	return s, nil
}

// consecutiveInsertIDs tells whether one INSERT of several rows gets
// consecutive AUTO_INCREMENT ids, as gorm assumes when it fills the ids of
// a multi-row insert: InnoDB's "consecutive" lock mode (MariaDB's default)
// or older, with a step of 1. MySQL 8's default "interleaved" mode does not
// promise it, and a server that does not say is not trusted either.
func consecutiveInsertIDs(ctx context.Context, db *sql.DB) bool {
	var mode, step int
	if err := db.QueryRowContext(ctx, "SELECT @@innodb_autoinc_lock_mode, @@auto_increment_increment").Scan(&mode, &step); err != nil {
		return false
	}
	return mode < 2 && step == 1
}

// mysqlSession opens the pool again, once, with the session variables
// every connection needs; go-sql-driver sets a DSN parameter it does not
// know as a session variable on each new connection.
//
//   - Read committed (see txOnce), set once per connection instead of by a
//     SET TRANSACTION before every transaction: a round trip less in each
//     booking batch, made by every process. MySQL 5.7.20+ and MariaDB
//     11.1+ call it transaction_isolation, older MariaDB only tx_isolation.
//     An isolation the operator's DSN sets is left to it, and then every
//     transaction still asks for read committed itself.
//   - On a Galera node, wsrep_sync_wait=1: every connection waits for the
//     cluster's earlier commits before it reads, or a page read on node B
//     right after a booking made on node A may not show the booking. The
//     operator's own wsrep_sync_wait (0 to turn this off, or a wider mask)
//     is kept. A server that is not a Galera node has no wsrep_on.
func (s *Store) mysqlSession(ctx context.Context, dsn string, cfg *gorm.Config) error {
	const op = "store.Open"
	_, rawQuery, _ := strings.Cut(dsn, "?")
	given, _ := url.ParseQuery(rawQuery)
	synced := dsn
	readCommitted := false
	for _, name := range []string{"transaction_isolation", "tx_isolation"} {
		if given.Has(name) {
			break
		}
		var v string
		if s.sqlDB.QueryRowContext(ctx, "SELECT @@"+name).Scan(&v) == nil {
			readCommitted, synced = true, dsnWith(synced, name, "'READ-COMMITTED'")
			break
		}
	}
	if !given.Has("wsrep_sync_wait") {
		var name, value string
		err := s.sqlDB.QueryRowContext(ctx, "SHOW VARIABLES LIKE 'wsrep_on'").Scan(&name, &value)
		switch {
		case err == nil && strings.EqualFold(value, "ON"):
			synced = dsnWith(synced, "wsrep_sync_wait", "1")
		case err != nil && !errors.Is(err, sql.ErrNoRows):
			return translate(op, err)
		}
	}
	if synced == dsn {
		return nil
	}
	parsed, err := mysqlDSN(synced)
	if err != nil {
		return errs.Wrap(errs.Invalid, op, err)
	}
	db, err := gorm.Open(mysql.New(mysql.Config{DSN: parsed, DefaultStringSize: 255}), cfg)
	if err != nil {
		return translate(op, err)
	}
	sqlDB, err := db.DB()
	if err != nil {
		return translate(op, err)
	}
	mysqlPool(sqlDB)
	_ = s.sqlDB.Close()
	s.db, s.sqlDB = db, sqlDB
	if err := s.Ping(ctx); err != nil {
		return err
	}
	// A connection whose SET failed would not have opened.
	s.sessionReadCommitted = readCommitted
	return nil
}

func mysqlPool(sqlDB *sql.DB) {
	sqlDB.SetMaxOpenConns(32)
	// As many idle as open: under load a pool that closes what it just
	// used reconnects for the next request (a handshake on both sides).
	sqlDB.SetMaxIdleConns(32)
	// Tianyi RDS closes idle connections; recycle ours before it does.
	sqlDB.SetConnMaxLifetime(5 * time.Minute)
	sqlDB.SetConnMaxIdleTime(time.Minute)
}

// dsnWith adds one parameter to a go-sql-driver DSN.
func dsnWith(dsn, key, value string) string {
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	return dsn + sep + url.QueryEscape(key) + "=" + url.QueryEscape(value)
}

func sqliteDSN(path string) string {
	q := url.Values{}
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "synchronous(NORMAL)")
	// The store checkpoints the WAL in the background (checkpointWAL):
	// SQLite's automatic checkpoint runs inside the commit that crosses
	// 1,000 pages, with an fsync, while every other writer waits.
	q.Add("_pragma", "wal_autocheckpoint(0)")
	// The WAL starts over once a checkpoint has copied all of it and no
	// reader is in it; a file grown under a long burst is cut back then.
	q.Add("_pragma", "journal_size_limit(67108864)")
	// 32 MiB of page cache per connection (SQLite's default is 2 MiB): the
	// indexes a booking writes into stop fitting in 2 MiB at a few tens of
	// thousands of bookings, and every insert then reads pages back.
	q.Add("_pragma", "cache_size(-32768)")
	// Immediate transactions take the write lock at BEGIN, so two writers
	// queue on busy_timeout instead of failing halfway with SQLITE_BUSY.
	q.Set("_txlock", "immediate")
	// Times as SQLite's own text ("2006-01-02 15:04:05.999999999-07:00"),
	// which the queries doing time arithmetic in SQL read.
	q.Set("_time_format", "sqlite")
	// and read back in UTC, as every stored time is.
	q.Set("_timezone", "UTC")
	return "file:" + path + "?" + q.Encode()
}

// mysqlDSN adds the parameters the store relies on unless the operator set
// them: utf8mb4, times parsed as UTC.
func mysqlDSN(dsn string) (string, error) {
	base, rawQuery, _ := strings.Cut(dsn, "?")
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return "", fmt.Errorf("mysql DSN parameters: %w", err)
	}
	for k, v := range map[string]string{"charset": "utf8mb4", "parseTime": "true", "loc": "UTC", "interpolateParams": "true", "timeout": "5s", "readTimeout": "30s", "writeTimeout": "30s"} {
		if q.Get(k) == "" {
			q.Set(k, v)
		}
	}
	return base + "?" + q.Encode(), nil
}

// Dialect is SQLite or MySQL.
func (s *Store) Dialect() string { return s.dialect }

// DB exposes the pool for metrics and migrations.
func (s *Store) DB() *sql.DB { return s.sqlDB }

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if err := s.sqlDB.PingContext(ctx); err != nil {
		return translate("store.Ping", err)
	}
	return nil
}

// Close releases the pool.
func (s *Store) Close() error {
	s.stopOnce.Do(func() {
		if s.stop != nil {
			close(s.stop)
			s.background.Wait()
		}
	})
	return s.sqlDB.Close()
}

// checkpointEvery is how often the SQLite WAL is copied back into the
// database file.
const checkpointEvery = time.Second

// checkpointWAL copies the WAL into the database file now and then, beside
// the writers rather than in one of their commits. A passive checkpoint
// takes no lock that a writer waits for; the WAL starts over from the top
// at the first write after a checkpoint caught up with it while no reader
// was in it. (Making the writers wait for that under load — a second pass
// under writeMu — cost pauses of 25–170 ms each time and did not even
// restart the WAL, since readers kept it.)
func (s *Store) checkpointWAL() {
	defer s.background.Done()
	t := time.NewTicker(checkpointEvery)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			if err := s.checkpointOnce(); err != nil {
				s.log.Warn("sqlite WAL checkpoint", "err", err)
			}
		}
	}
}

// walForceFrames is the WAL length (pages) at which the checkpointer stops
// waiting for a quiet moment: 1 GiB at SQLite's 4 KiB pages.
const walForceFrames = 1 << 18

func (s *Store) checkpointOnce() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var busy, frames, copied int
	if err := s.sqlDB.QueryRowContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &frames, &copied); err != nil {
		return err
	}
	if frames < walForceFrames {
		return nil
	}
	// The WAL starts over only when no reader is in it, and under steady
	// load one always is: past walForceFrames a RESTART makes writers and
	// new readers wait until it has. A pause, once per gigabyte of writes,
	// rather than a WAL that grows until the disk is full.
	s.log.Warn("sqlite WAL past 1 GiB under steady load: restarting it, writers wait", "frames", frames)
	_, err := s.sqlDB.ExecContext(ctx, "PRAGMA wal_checkpoint(RESTART)")
	return err
}

// Now is the store's clock, UTC.
func (s *Store) Now() time.Time { return s.now() }

// tx runs fn in a transaction; any error rolls it back. Every transaction
// of the store runs through here, and every one is run again from the start
// when the server rolled it back for colliding with another: InnoDB's
// deadlock victim or, on Galera, the loser of certification against another
// node's commit (both MySQL error 1213), or after a lock wait timeout
// (1205); up to maxTxTries times in all, after a short jittered pause. A
// collision then costs the caller milliseconds, whichever write it hit, and
// reaches it as "busy" only when it outlasts every try.
//
// fn may therefore run more than once, and only its last run counts. Its
// rules:
//   - Results go into variables outside fn only by assignment, set afresh at
//     the top of each run: a counter outside fn is set, never incremented,
//     a slice outside fn is reset before it is appended to, and a row value
//     outside fn is zeroed before it is read into or created (a failed run
//     leaves its id in it, and gorm would then insert that id, or add it to
//     a query's conditions).
//   - fn touches nothing outside the database but the transaction's notes
//     (each run gets fresh ones; only the committed run's are applied):
//     what must happen after the write (a cache forgotten, a replica told)
//     happens after tx returns.
//   - fn passes a database error on (wrapped, or translated into a coded
//     error that keeps it), never goes past it: after a deadlock the server
//     has already undone what came before, and what fn wrote after it would
//     commit alone.
func (s *Store) tx(ctx context.Context, op string, fn func(tx *gorm.DB) error) error {
	return s.runTx(ctx, op, fn, maxTxTries)
}

// maxTxTries bounds tx. Lock wait timeouts count double: each try has
// already waited innodb_lock_wait_timeout (50 s by default).
const maxTxTries = 5

func (s *Store) runTx(ctx context.Context, op string, fn func(tx *gorm.DB) error, tries int) error {
	budget := tries
	for attempt := 1; ; attempt++ {
		err := s.txOnce(ctx, fn)
		if err == nil {
			return nil
		}
		code := retryableCode(err)
		if code == 1205 {
			budget--
		}
		if code == 0 || attempt >= budget || ctx.Err() != nil {
			if code != 0 && tries > 1 {
				s.log.Warn("transaction still failing after retries", "op", op, "tries", attempt, "err", err)
			}
			return translate(op, err)
		}
		s.txRetries.Add(1)
		if !sleepCtx(ctx, txBackoff(attempt)) {
			return translate(op, err)
		}
	}
}

// txOnce is one run of fn in a transaction, with its own notes: applied to
// the books when it commits, dropped when it does not.
func (s *Store) txOnce(ctx context.Context, fn func(tx *gorm.DB) error) error {
	var opts []*sql.TxOptions
	if s.dialect == MySQL && !s.sessionReadCommitted {
		// Read committed: a transaction that waited for a row lock must see
		// what the lock holder committed. Under InnoDB's default repeatable
		// read, reads after the lock would still show the snapshot taken at
		// the transaction's first read, and two bookings could take one card.
		opts = append(opts, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
	}
	if s.dialect == SQLite {
		// SQLite admits one writer; queueing writers here in Go is cheaper and
		// fairer than letting them poll the file lock through busy_timeout.
		s.writeMu.Lock()
		defer s.writeMu.Unlock()
	}
	ctx, notes := withNotes(ctx)
	defer notes.releaseHeld() // on a panic too; a second call does nothing
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := fn(tx); err != nil {
			return err
		}
		// The change log of the books it locked, before the commit: in the
		// transaction that raised their generations (booking_changes.go).
		return s.endTxLog(tx)
	}, opts...)
	notes.releaseHeld()
	if err != nil {
		return err
	}
	s.books.applyNotes(notes)
	return nil
}

// txBackoff is the pause before try attempt+1: up to 10 ms doubled per
// try, capped at 320 ms, drawn at random so that the transactions that
// collided do not collide again in step.
func txBackoff(attempt int) time.Duration {
	ceiling := 10 * time.Millisecond << min(attempt-1, 5)
	return ceiling/2 + rand.N(ceiling/2)
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// read returns a session bound to ctx for queries outside a transaction.
func (s *Store) read(ctx context.Context) *gorm.DB { return s.db.WithContext(ctx) }
