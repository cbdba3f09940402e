package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"

	gomysql "github.com/go-sql-driver/mysql"
	"gorm.io/gorm"

	"cardhour/errs"
)

// translate turns a driver or gorm error into a coded error. Coded errors
// pass through untouched, so a validation error raised inside a transaction
// keeps its code.
func translate(op string, err error) error {
	if err == nil {
		return nil
	}
	if _, ok := errs.As(err); ok {
		return err
	}
	switch {
	case errors.Is(err, gorm.ErrRecordNotFound), errors.Is(err, sql.ErrNoRows):
		return errs.Wrap(errs.NotFound, op, err)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return errs.Wrap(errs.Unavailable, op, err)
	}
	var me *gomysql.MySQLError
	if errors.As(err, &me) {
		switch me.Number {
		case 1062: // ER_DUP_ENTRY
			return &errs.Error{Code: errs.Conflict, Op: op, Key: "error.duplicate", Err: err}
		case 1451: // ER_ROW_IS_REFERENCED_2
			return &errs.Error{Code: errs.Conflict, Op: op, Key: "error.in_use", Err: err}
		case 1452: // ER_NO_REFERENCED_ROW_2
			return &errs.Error{Code: errs.Invalid, Op: op, Key: "error.missing_reference", Err: err}
		case 1213, 1205: // deadlock, lock wait timeout: the caller may retry
			return &errs.Error{Code: errs.Conflict, Op: op, Key: "error.busy", Err: err}
		case 1040, 1053, 2002, 2003, 2006, 2013: // too many connections, shutdown, gone away
			return &errs.Error{Code: errs.Unavailable, Op: op, Key: "error.db_unavailable", Err: err}
		}
		return errs.Wrap(errs.Internal, op, err)
	}
	if isConnectionError(err) {
		return &errs.Error{Code: errs.Unavailable, Op: op, Key: "error.db_unavailable", Err: err}
	}
	// The pure-Go SQLite driver reports constraint failures only in text.
	msg := err.Error()
	switch {
	case strings.Contains(msg, "UNIQUE constraint failed"):
		return &errs.Error{Code: errs.Conflict, Op: op, Key: "error.duplicate", Err: err}
	case strings.Contains(msg, "FOREIGN KEY constraint failed"):
		return &errs.Error{Code: errs.Conflict, Op: op, Key: "error.in_use", Err: err}
	case strings.Contains(msg, "database is locked"), strings.Contains(msg, "SQLITE_BUSY"):
		return &errs.Error{Code: errs.Unavailable, Op: op, Key: "error.db_unavailable", Err: err}
	case strings.Contains(msg, "unable to open database"), strings.Contains(msg, "disk I/O error"):
		return &errs.Error{Code: errs.Unavailable, Op: op, Key: "error.db_unavailable", Err: err}
	}
	return errs.Wrap(errs.Internal, op, err)
}

// retryableCode is 1213 (a deadlock victim, or a Galera certification
// failure) or 1205 (lock wait timeout) when err is one, else 0. Either way
// the server's part of the transaction is undone (gorm rolls back the rest
// of a 1205), so the transaction may run again from the start.
func retryableCode(err error) uint16 {
	var me *gomysql.MySQLError
	if errors.As(err, &me) && (me.Number == 1213 || me.Number == 1205) {
		return me.Number
	}
	return 0
}

// isDuplicate tells a unique key's refusal from the other conflicts: a
// collision that outlasted tx's tries is a conflict too ("error.busy"), and
// must not read as "taken".
func isDuplicate(err error) bool {
	e, ok := errs.As(err)
	return ok && e.Code == errs.Conflict && e.Key == "error.duplicate"
}

func isConnectionError(err error) bool {
	if errors.Is(err, driver.ErrBadConn) || errors.Is(err, gomysql.ErrInvalidConn) ||
		errors.Is(err, sql.ErrConnDone) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	var oe *net.OpError
	return errors.As(err, &oe)
}

func fieldErr(op, field, key string) error {
	return &errs.Error{Code: errs.Invalid, Op: op, Key: key, Fields: map[string]string{field: key}}
}

// withKey sets the message key of a not-found error so the user is told what
// was missing.
func withKey(err error, key string) error {
	if e, ok := errs.As(err); ok && e.Code == errs.NotFound && e.Key == "" {
		e.Key = key
	}
	return err
}
