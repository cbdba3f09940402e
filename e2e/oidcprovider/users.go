package main

import (
	"encoding/json"
	"fmt"
	"log"
	"os"
	"strings"

	"github.com/zitadel/oidc/v3/example/server/storage"
)

// fileUser is one entry of the users file.
type fileUser struct {
	Username string   `json:"username"`
	Password string   `json:"password"`
	Email    string   `json:"email"`
	Name     string   `json:"name"`
	Groups   []string `json:"groups"`
}

// userFile is the example storage's UserStore over a JSON file read at
// every lookup: a test rewrites the file and the next login sees it. The
// username is also the user's ID, hence the token's sub.
type userFile struct {
	path string
}

func (f *userFile) load() ([]fileUser, error) {
	data, err := os.ReadFile(f.path)
	if err != nil {
		return nil, fmt.Errorf("users file: %w", err)
	}
	var users []fileUser
	if err := json.Unmarshal(data, &users); err != nil {
		return nil, fmt.Errorf("users file %s: %w", f.path, err)
	}
	return users, nil
}

func (f *userFile) find(username string) *fileUser {
	users, err := f.load()
	if err != nil {
		log.Printf("oidcprovider: %v", err)
		return nil
	}
	for i := range users {
		if users[i].Username == username {
			return &users[i]
		}
	}
	return nil
}

func (f *userFile) GetUserByID(id string) *storage.User { return f.GetUserByUsername(id) }

func (f *userFile) GetUserByUsername(username string) *storage.User {
	u := f.find(username)
	if u == nil {
		return nil
	}
	first, last, _ := strings.Cut(u.Name, " ")
	return &storage.User{
		ID:            u.Username,
		Username:      u.Username,
		Password:      u.Password,
		FirstName:     first,
		LastName:      last,
		Email:         u.Email,
		EmailVerified: true,
	}
}

// ExampleClientID names the example's JWT-profile service user, unused here.
func (f *userFile) ExampleClientID() string { return storage.ServiceUserID }
