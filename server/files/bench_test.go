package files_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"cardhour/server/servertest"
	"cardhour/store"
	"cardhour/store/storetest"
)

// BenchmarkListFileVersions1000 measures GET /api/v1/tasks/{id}/versions/{path}
// for a file with 1,000 versions, through the whole handler stack (token
// auth, permission check, query, JSON), on SQLite and on MariaDB:
//
//	bash scripts/testenv.sh go test -run '^$' -bench ListFileVersions -count 5 ./server/files/
func BenchmarkListFileVersions1000(b *testing.B) {
	for _, dialect := range storetest.AllDialects {
		b.Run(dialect, func(b *testing.B) {
			o := servertest.Options{}
			if dialect == store.MySQL {
				dsn, _ := storetest.MySQLDSN(b)
				o.Vars = map[string]string{"CARDHOUR_DB": "mysql://" + dsn}
			}
			e := servertest.New(b, o)
			ctx := context.Background()
			admin := store.WithActor(ctx, store.Actor{UserID: e.Users[store.RoleAdmin].ID, Username: "admin"})
			team, err := e.St.CreateTeam(admin, store.TeamInput{Name: "bench"})
			if err != nil {
				b.Fatal(err)
			}
			task, err := e.St.CreateTask(admin, store.TaskInput{TeamID: team.ID, Name: "bench", Priority: "normal", EstimateCardHours: 1, DataReadiness: "ready"})
			if err != nil {
				b.Fatal(err)
			}
			for i := 0; i < 1000; i++ {
				_, err := e.St.CreateFileVersion(admin, store.FileVersionInput{TaskID: task.ID, Path: "configs/train.yaml",
					ObjectKey: "tasks/1/files/configs/train.yaml", VersionID: fmt.Sprintf("v%020d-00000000", i), Size: 100,
					SHA256: strings.Repeat(fmt.Sprintf("%x", i%16), 64), Message: "step", Source: store.FileSourceAPI})
				if err != nil {
					b.Fatal(err)
				}
			}
			path := fmt.Sprintf("/api/v1/tasks/%d/versions/configs/train.yaml", task.ID)
			token := e.Users[store.RoleAdmin].Token
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				req := httptest.NewRequest(http.MethodGet, path, nil)
				req.Header.Set("Authorization", "Bearer "+token)
				rec := httptest.NewRecorder()
				e.Srv.Handler().ServeHTTP(rec, req)
				if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"total":1000`) {
					b.Fatalf("status %d: %.200s", rec.Code, rec.Body.String())
				}
			}
		})
	}
}
