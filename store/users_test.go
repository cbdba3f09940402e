package store_test

import (
	"context"
	"strings"
	"testing"

	"cardhour/errs"
	"cardhour/store"
	"cardhour/store/storetest"
)

func TestCreateUser(t *testing.T) {
	t.Parallel()
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := asActor()
		n := auditCount(t, st)
		u, err := st.CreateUser(ctx, store.UserCreate{Username: "  Alice.W ", DisplayName: " 王芳 ", Email: " alice@example.cn ", Password: testPassword})
		if err != nil {
			t.Fatal(err)
		}
		if u.ID == 0 || u.Username != "alice.w" || u.DisplayName != "王芳" || u.Email != "alice@example.cn" || u.Role != store.RoleMember {
			t.Errorf("created %+v: want normalised username, trimmed fields, default role member", u)
		}
		if u.PasswordHash == testPassword || !strings.HasPrefix(u.PasswordHash, "$2") {
			t.Errorf("password stored as %q, want a bcrypt hash", u.PasswordHash)
		}
		_, after := wantAudit(t, st, n, "create", "user", u.ID, false, true)
		if after["username"] != "alice.w" {
			t.Errorf("audit after = %v", after)
		}

		got, err := st.FindUserByUsername(ctx, " ALICE.w")
		if err != nil {
			t.Fatal(err)
		}
		if got.ID != u.ID || got.DisplayName != "王芳" || !got.CreatedAt.Equal(u.CreatedAt) || !got.PasswordChangedAt.Equal(u.PasswordChangedAt) {
			t.Errorf("read back %+v, want %+v", got, u)
		}
		byID, err := st.FindUserByID(ctx, u.ID)
		if err != nil || byID.Username != "alice.w" {
			t.Errorf("FindUserByID = %+v, %v", byID, err)
		}
	})
}

func TestCreateUserRefusesInvalidInput(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 73)
	cases := []struct {
		name   string
		in     store.UserCreate
		key    string
		fields map[string]string
	}{
		{"empty username", store.UserCreate{Username: "", Password: testPassword}, "user.username_invalid", map[string]string{"username": "user.username_invalid"}},
		{"one-letter username", store.UserCreate{Username: "a", Password: testPassword}, "user.username_invalid", map[string]string{"username": "user.username_invalid"}},
		{"username with space", store.UserCreate{Username: "a b", Password: testPassword}, "user.username_invalid", map[string]string{"username": "user.username_invalid"}},
		{"short password", store.UserCreate{Username: "bob", Password: "1234567"}, "user.password_short", map[string]string{"password": "user.password_short"}},
		{"password over bcrypt's 72 bytes", store.UserCreate{Username: "bob", Password: long}, "user.password_long", map[string]string{"password": "user.password_long"}},
		{"bad email", store.UserCreate{Username: "bob", Email: "bob@", Password: testPassword}, "user.email_invalid", map[string]string{"email": "user.email_invalid"}},
		{"unknown role", store.UserCreate{Username: "bob", Password: testPassword, Role: "root"}, "user.role_invalid", map[string]string{"role": "user.role_invalid"}},
		{"long display name", store.UserCreate{Username: "bob", DisplayName: strings.Repeat("名", 101), Password: testPassword}, "field.too_long", map[string]string{"display_name": "field.too_long"}},
		{"everything wrong", store.UserCreate{Username: "?", Email: "x", Password: "", Role: "god"}, "user.username_invalid",
			map[string]string{"username": "user.username_invalid", "email": "user.email_invalid", "password": "user.password_short", "role": "user.role_invalid"}},
	}
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		before := storetest.MustCounts(t, st)
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				u, err := st.CreateUser(asActor(), c.in)
				if u != nil {
					t.Errorf("user = %+v, want nil", u)
				}
				e := storetest.AssertCode(t, err, errs.Invalid, c.key)
				assertFields(t, e.Fields, c.fields)
			})
		}
		storetest.AssertUnchanged(t, st, before)
	})
}

func TestCreateUserDuplicateUsername(t *testing.T) {
	t.Parallel()
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		MustUser(t, st, "alice", store.RoleMember)
		before := storetest.MustCounts(t, st)
		u, err := st.CreateUser(asActor(), store.UserCreate{Username: "ALICE", Password: testPassword})
		if u != nil {
			t.Errorf("user = %+v, want nil", u)
		}
		e := storetest.AssertCode(t, err, errs.Conflict, "user.username_taken")
		assertFields(t, e.Fields, map[string]string{"username": "user.username_taken"})
		storetest.AssertUnchanged(t, st, before)
	})
}

func TestFindUsers(t *testing.T) {
	t.Parallel()
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		for _, n := range []string{"carol", "alice", "bob"} {
			MustUser(t, st, n, store.RoleMember)
		}
		all, err := st.FindUsers(ctx, store.UserFilter{})
		if err != nil {
			t.Fatal(err)
		}
		if got := usernames(all); got != "alice,bob,carol" {
			t.Errorf("FindUsers = %s, want alice,bob,carol (by username)", got)
		}
		// MustUser sets the display name to the upper-case username.
		some, err := st.FindUsers(ctx, store.UserFilter{Query: "Ro"})
		if err != nil {
			t.Fatal(err)
		}
		if got := usernames(some); got != "carol" {
			t.Errorf("FindUsers(Ro) = %s, want carol", got)
		}
		two, err := st.FindUsers(ctx, store.UserFilter{Limit: 2})
		if err != nil || len(two) != 2 {
			t.Errorf("FindUsers(limit 2) = %d users, %v", len(two), err)
		}
	})
}

func usernames(us []store.User) string {
	var out []string
	for _, u := range us {
		out = append(out, u.Username)
	}
	return strings.Join(out, ",")
}

func TestFindUserNotFound(t *testing.T) {
	t.Parallel()
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		_, err := st.FindUserByID(context.Background(), 999)
		storetest.AssertCode(t, err, errs.NotFound, "user.not_found")
		_, err = st.FindUserByUsername(context.Background(), "nobody")
		storetest.AssertCode(t, err, errs.NotFound, "user.not_found")
	})
}

func TestUpdateUser(t *testing.T) {
	t.Parallel()
	storetest.ForEachDialectName(t, func(t *testing.T, dialect string) {
		clock := storetest.NewClock(epoch)
		st := storetest.MustOpenWith(t, dialect, store.Options{Now: clock.Now})
		ctx := asActor()
		u := MustUser(t, st, "alice", store.RoleMember)
		clock.Advance(90 * 60e9)
		n := auditCount(t, st)
		got, err := st.UpdateUser(ctx, u.ID, store.UserUpdate{DisplayName: ptr(" Alice W "), Email: ptr("a@example.cn"), Role: ptr(store.RoleManager)})
		if err != nil {
			t.Fatal(err)
		}
		if got.DisplayName != "Alice W" || got.Email != "a@example.cn" || got.Role != store.RoleManager || got.Disabled {
			t.Errorf("updated %+v", got)
		}
		if !got.UpdatedAt.Equal(clock.Now()) || !got.CreatedAt.Equal(u.CreatedAt) || !got.PasswordChangedAt.Equal(u.PasswordChangedAt) {
			t.Errorf("times after update: created %v updated %v password %v; want updated = store clock %v, others unchanged",
				got.CreatedAt, got.UpdatedAt, got.PasswordChangedAt, clock.Now())
		}
		before, after := wantAudit(t, st, n, "update", "user", u.ID, true, true)
		if before["role"] != store.RoleMember || after["role"] != store.RoleManager {
			t.Errorf("audit role %v -> %v, want member -> manager", before["role"], after["role"])
		}
		read, err := st.FindUserByID(ctx, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		if read.DisplayName != "Alice W" || read.Role != store.RoleManager || !read.UpdatedAt.Equal(clock.Now()) {
			t.Errorf("read back %+v, want the update and updated_at %v", read, clock.Now())
		}
		if read.PasswordHash != u.PasswordHash {
			t.Error("an update without password changed the hash")
		}

		// Nothing set: still one audit entry, nothing changes.
		n = auditCount(t, st)
		if _, err := st.UpdateUser(ctx, u.ID, store.UserUpdate{}); err != nil {
			t.Fatal(err)
		}
		wantAudit(t, st, n, "update", "user", u.ID, true, true)
		if c := storetest.MustCount(t, st, "users"); c != 1 {
			t.Errorf("users = %d after an empty update, want 1", c)
		}
	})
}

func TestUpdateUserRefusesInvalidInput(t *testing.T) {
	t.Parallel()
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := asActor()
		u := MustUser(t, st, "alice", store.RoleMember)
		cases := []struct {
			name  string
			up    store.UserUpdate
			key   string
			field string
		}{
			{"unknown role", store.UserUpdate{Role: ptr("owner")}, "user.role_invalid", "role"},
			{"bad email", store.UserUpdate{Email: ptr("not-an-email")}, "user.email_invalid", "email"},
			{"short password", store.UserUpdate{Password: ptr("short")}, "user.password_short", "password"},
			{"long display name", store.UserUpdate{DisplayName: ptr(strings.Repeat("d", 101))}, "field.too_long", "display_name"},
		}
		before := storetest.MustCounts(t, st)
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				got, err := st.UpdateUser(ctx, u.ID, c.up)
				if got != nil {
					t.Errorf("user = %+v, want nil", got)
				}
				e := storetest.AssertCode(t, err, errs.Invalid, c.key)
				if e.Fields[c.field] != c.key {
					t.Errorf("fields = %v, want %s: %s", e.Fields, c.field, c.key)
				}
			})
		}
		storetest.AssertUnchanged(t, st, before)
		read, err := st.FindUserByID(ctx, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		if read.Role != u.Role || read.Email != u.Email || read.DisplayName != u.DisplayName || read.PasswordHash != u.PasswordHash {
			t.Errorf("refused updates changed the user: %+v", read)
		}

		_, err = st.UpdateUser(ctx, 999, store.UserUpdate{DisplayName: ptr("x")})
		storetest.AssertCode(t, err, errs.NotFound, "user.not_found")
		storetest.AssertUnchanged(t, st, before)
	})
}

func TestAuthenticate(t *testing.T) {
	t.Parallel()
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		u := MustUser(t, st, "alice", store.RoleMember)
		got, err := st.Authenticate(ctx, " Alice ", testPassword)
		if err != nil {
			t.Fatal(err)
		}
		if got.ID != u.ID {
			t.Errorf("authenticated user %d, want %d", got.ID, u.ID)
		}
		for _, c := range []struct{ name, user, pw string }{
			{"wrong password", "alice", testPassword + "!"},
			{"empty password", "alice", ""},
			{"unknown user", "mallory", testPassword},
		} {
			got, err := st.Authenticate(ctx, c.user, c.pw)
			if got != nil {
				t.Errorf("%s: user = %+v, want nil", c.name, got)
			}
			// Unknown user and wrong password must be indistinguishable.
			storetest.AssertCode(t, err, errs.Unauthorized, "auth.bad_credentials")
		}
		if _, err := st.UpdateUser(asActor(), u.ID, store.UserUpdate{Disabled: ptr(true)}); err != nil {
			t.Fatal(err)
		}
		_, err = st.Authenticate(ctx, "alice", testPassword)
		storetest.AssertCode(t, err, errs.Unauthorized, "auth.bad_credentials")
	})
}

func TestChangePassword(t *testing.T) {
	t.Parallel()
	storetest.ForEachDialectName(t, func(t *testing.T, dialect string) {
		clock := storetest.NewClock(epoch)
		st := storetest.MustOpenWith(t, dialect, store.Options{Now: clock.Now})
		ctx := asActor()
		u := MustUser(t, st, "alice", store.RoleMember)
		token, err := st.CreateSession(ctx, u.ID)
		if err != nil {
			t.Fatal(err)
		}

		before := storetest.MustCounts(t, st)
		err = st.ChangePassword(ctx, u.ID, "not the password", "brand new secret")
		e := storetest.AssertCode(t, err, errs.Invalid, "user.current_password_wrong")
		assertFields(t, e.Fields, map[string]string{"current": "user.current_password_wrong"})
		err = st.ChangePassword(ctx, u.ID, testPassword, "short")
		storetest.AssertCode(t, err, errs.Invalid, "user.password_short")
		storetest.AssertUnchanged(t, st, before)
		if _, err := st.Authenticate(ctx, "alice", testPassword); err != nil {
			t.Fatalf("refused changes broke the old password: %v", err)
		}

		clock.Advance(60e9)
		n := auditCount(t, st)
		if err := st.ChangePassword(ctx, u.ID, testPassword, "brand new secret"); err != nil {
			t.Fatal(err)
		}
		wantAudit(t, st, n, "update", "user", u.ID, true, true)
		_, err = st.Authenticate(ctx, "alice", testPassword)
		storetest.AssertCode(t, err, errs.Unauthorized, "auth.bad_credentials")
		got, err := st.Authenticate(ctx, "alice", "brand new secret")
		if err != nil {
			t.Fatal(err)
		}
		if !got.PasswordChangedAt.Equal(clock.Now()) {
			t.Errorf("password_changed_at = %v, want %v", got.PasswordChangedAt, clock.Now())
		}
		// A new password ends the sessions of the account.
		_, err = st.FindSessionUser(ctx, token)
		storetest.AssertCode(t, err, errs.NotFound, "auth.session_expired")
		if c := storetest.MustCount(t, st, "sessions"); c != 0 {
			t.Errorf("sessions = %d after a password change, want 0", c)
		}

		err = st.ChangePassword(ctx, 999, testPassword, "brand new secret")
		storetest.AssertCode(t, err, errs.NotFound, "user.not_found")
	})
}

func TestLastAdminIsKept(t *testing.T) {
	t.Parallel()
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := asActor()
		admin := MustUser(t, st, "root", store.RoleAdmin)
		before := storetest.MustCounts(t, st)
		for name, up := range map[string]store.UserUpdate{
			"demote":  {Role: ptr(store.RoleManager)},
			"disable": {Disabled: ptr(true)},
		} {
			_, err := st.UpdateUser(ctx, admin.ID, up)
			if errs.CodeOf(err) != errs.Conflict {
				t.Fatalf("%s the last admin: err = %v, want conflict", name, err)
			}
			storetest.AssertCode(t, err, errs.Conflict, "user.last_admin")
		}
		storetest.AssertUnchanged(t, st, before)

		// A disabled admin does not count as another admin.
		other := MustUser(t, st, "root2", store.RoleAdmin)
		if _, err := st.UpdateUser(ctx, other.ID, store.UserUpdate{Disabled: ptr(true)}); err != nil {
			t.Fatalf("disable one of two admins: %v", err)
		}
		_, err := st.UpdateUser(ctx, admin.ID, store.UserUpdate{Role: ptr(store.RoleMember)})
		storetest.AssertCode(t, err, errs.Conflict, "user.last_admin")

		// With another active admin, the first may step down.
		if _, err := st.UpdateUser(ctx, other.ID, store.UserUpdate{Disabled: ptr(false)}); err != nil {
			t.Fatal(err)
		}
		got, err := st.UpdateUser(ctx, admin.ID, store.UserUpdate{Role: ptr(store.RoleMember)})
		if err != nil {
			t.Fatalf("demote one of two admins: %v", err)
		}
		if got.Role != store.RoleMember {
			t.Errorf("role = %s, want member", got.Role)
		}
		_, err = st.UpdateUser(ctx, other.ID, store.UserUpdate{Disabled: ptr(true)})
		storetest.AssertCode(t, err, errs.Conflict, "user.last_admin")
		// Changing other fields of the last admin is fine.
		if _, err := st.UpdateUser(ctx, other.ID, store.UserUpdate{DisplayName: ptr("Root")}); err != nil {
			t.Errorf("rename the last admin: %v", err)
		}
	})
}

func TestEnsureAdmin(t *testing.T) {
	t.Parallel()
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		_, err := st.EnsureAdmin(ctx, "")
		storetest.AssertCode(t, err, errs.Invalid, "user.password_required")
		if c := storetest.MustCount(t, st, "users"); c != 0 {
			t.Fatalf("users = %d after a refused EnsureAdmin", c)
		}

		// The operator's bootstrap password may be shorter than the portal's rule.
		created, err := st.EnsureAdmin(ctx, "pw")
		if err != nil || !created {
			t.Fatalf("EnsureAdmin on an empty database = %v, %v; want true, nil", created, err)
		}
		u, err := st.Authenticate(ctx, "admin", "pw")
		if err != nil {
			t.Fatal(err)
		}
		if u.Role != store.RoleAdmin {
			t.Errorf("role = %s, want admin", u.Role)
		}
		e := lastAudit(t, st)
		if e.Action != "create" || e.Entity != "user" || e.ActorName != "system" || e.ActorID != nil {
			t.Errorf("bootstrap audit entry = %+v, want a create by system", e)
		}

		created, err = st.EnsureAdmin(ctx, "other")
		if err != nil || created {
			t.Errorf("EnsureAdmin again = %v, %v; want false, nil", created, err)
		}
		if _, err := st.Authenticate(ctx, "admin", "pw"); err != nil {
			t.Errorf("a second EnsureAdmin changed the password: %v", err)
		}
		if c := storetest.MustCount(t, st, "users"); c != 1 {
			t.Errorf("users = %d, want 1", c)
		}
	})
}

func TestEnsureAdminLeavesExistingUsers(t *testing.T) {
	t.Parallel()
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		MustUser(t, st, "alice", store.RoleMember)
		created, err := st.EnsureAdmin(context.Background(), "pw")
		if err != nil || created {
			t.Errorf("EnsureAdmin with a user present = %v, %v; want false, nil", created, err)
		}
	})
}
