package dataset

import (
	"context"
	"fmt"

	"cardhour/schedule"
	"cardhour/store"
)

// genType is a card type of the synthetic fleet.
type genType struct {
	name     string
	vram     int
	priceFen int64
	share    float64 // of the fleet's cards
}

var genTypes = []genType{
	{"H800 80GB", 80, 2200, 0.4},
	{"A800 80GB", 80, 1200, 0.3},
	{"L40S 48GB", 48, 700, 0.2},
	{"RTX 4090 24GB", 24, 350, 0.1},
}

// genUnits are the output units of each task kind, with a plausible amount
// per booked card-hour.
var genUnits = map[string]struct {
	unit    string
	perHour float64
}{
	store.TaskKindPretrain:  {"B tokens", 0.012},
	store.TaskKindFinetune:  {"epochs", 0.05},
	store.TaskKindEval:      {"eval runs", 0.4},
	store.TaskKindInference: {"M requests", 0.9},
	store.TaskKindData:      {"TB processed", 0.02},
	store.TaskKindOther:     {"experiments", 0.1},
}

// genTask is a task of the synthetic teams, with who may book for it and
// on which card types.
type genTask struct {
	id, team int64
	kind     string
	priority string
	users    []int64
	types    []int // genTypes indexes
}

// inventory creates the card types, and the cards eight to a host.
func (g *generator) inventory() error {
	st, spec := g.st, g.spec
	g.typeIDs = make([]int64, len(genTypes))
	g.cardsOf = make([][]int64, len(genTypes))
	for i, t := range genTypes {
		ct, err := named(t.name, " "+g.stamp, func(name string) (*store.CardType, error) {
			return st.CreateCardType(g.actx, store.CardTypeInput{Name: name, VRAMGiB: t.vram, TFLOPSBF16: 300, PriceFen: t.priceFen})
		})
		if err != nil {
			return fmt.Errorf("%s: card type: %w", op, err)
		}
		g.typeIDs[i] = ct.ID
	}
	var host *store.Host
	for n := 0; n < spec.Cards; n++ {
		if n%8 == 0 {
			var err error
			host, err = named(fmt.Sprintf("gen-%03d", n/8+1), "-"+g.stamp, func(name string) (*store.Host, error) {
				return st.CreateHost(g.actx, store.HostInput{Name: name, Zone: "gen"})
			})
			if err != nil {
				return fmt.Errorf("%s: host: %w", op, err)
			}
		}
		ti := pickType(float64(n) / float64(spec.Cards))
		c, err := st.CreateCard(g.actx, store.CardInput{UUID: fmt.Sprintf("GPU-%08x-%04x-4000-8000-%012x", spec.Seed&0xffffffff, n, st.Now().UnixNano()&0xffffffffffff+int64(n)),
			GPUIndex: n % 8, HostID: host.ID, CardTypeID: g.typeIDs[ti], Status: store.CardActive})
		if err != nil {
			return fmt.Errorf("%s: card: %w", op, err)
		}
		g.cardsOf[ti] = append(g.cardsOf[ti], c.ID)
		spec.Progress("inventory", n+1, spec.Cards)
	}
	g.stats.Cards = spec.Cards
	return nil
}

// teams creates the teams, a manager and two members in each, and their
// tasks.
func (g *generator) teams(ctx context.Context) error {
	for ti := 0; ti < g.spec.Teams; ti++ {
		team, err := named(fmt.Sprintf("GEN 团队 %02d", ti+1), " "+g.stamp, func(name string) (*store.Team, error) {
			return g.st.CreateTeam(g.actx, store.TeamInput{Name: name})
		})
		if err != nil {
			return fmt.Errorf("%s: team: %w", op, err)
		}
		members, err := g.members(team, ti)
		if err != nil {
			return err
		}
		if err := g.teamTasks(ctx, team, ti, members); err != nil {
			return err
		}
		g.spec.Progress("teams", ti+1, g.spec.Teams)
	}
	return nil
}

// members creates team ti's manager and two members.
func (g *generator) members(team *store.Team, ti int) ([]*store.User, error) {
	var members []*store.User
	for ui, role := range []string{store.RoleManager, store.RoleMember, store.RoleMember} {
		u, err := named(fmt.Sprintf("gen-t%02d-%d", ti+1, ui), "-"+g.stamp, func(name string) (*store.User, error) {
			return g.st.CreateUser(g.actx, store.UserCreate{Username: name, DisplayName: fmt.Sprintf("GEN 用户 %02d-%d", ti+1, ui),
				Password: "cardhour-gen", Role: role})
		})
		if err != nil {
			return nil, fmt.Errorf("%s: user: %w", op, err)
		}
		teamRole := store.TeamRoleMember
		if role == store.RoleManager {
			teamRole = store.TeamRoleManager
		}
		if _, err := g.st.SetMembership(g.actx, team.ID, u.ID, teamRole); err != nil {
			return nil, fmt.Errorf("%s: membership: %w", op, err)
		}
		members = append(members, u)
	}
	return members, nil
}

// teamTasks creates team ti's tasks, written by its two members in turn,
// of every kind and priority.
func (g *generator) teamTasks(ctx context.Context, team *store.Team, ti int, members []*store.User) error {
	types := []int{ti % len(genTypes), (ti + 1) % len(genTypes)}
	for k := 0; k < g.spec.TasksPerTeam; k++ {
		kind := store.TaskKinds[k%len(store.TaskKinds)]
		prio := schedule.Normal
		switch k % 5 {
		case 0:
			prio = schedule.Core
		case 4:
			prio = schedule.Backfill
		}
		author := members[1+k%2]
		t, err := g.st.CreateTask(store.WithActor(ctx, store.Actor{UserID: author.ID, Username: author.Username}), store.TaskInput{TeamID: team.ID,
			Name: fmt.Sprintf("GEN %s 任务 %02d", kind, k+1), Priority: prio, EstimateCardHours: 1000, DataReadiness: schedule.DataReady})
		if err != nil {
			return fmt.Errorf("%s: task: %w", op, err)
		}
		// Straight to the column, as the kind is part of the data set and
		// not a change anyone made (SetTaskKind would audit it).
		if _, err := g.st.DB().ExecContext(ctx, "UPDATE tasks SET kind = ? WHERE id = ?", kind, t.ID); err != nil {
			return fmt.Errorf("%s: task kind: %w", op, err)
		}
		g.tasks = append(g.tasks, genTask{id: t.ID, team: team.ID, kind: kind, priority: prio,
			users: []int64{members[0].ID, members[1].ID, members[2].ID}, types: types})
	}
	return nil
}

// pickType chooses a card type by the fleet shares, at position x (0–1).
func pickType(x float64) int {
	acc := 0.0
	for i, g := range genTypes {
		acc += g.share
		if x < acc {
			return i
		}
	}
	return len(genTypes) - 1
}
