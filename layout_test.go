package main

import (
	"go/ast"
	"go/parser"
	gotoken "go/token"
	"io/fs"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The house by area, held by a test: areas under server/ never import one
// another nor the kernel, the kernel reaches areas only through its table,
// the product never imports test helpers, and no function in the product
// grows past 150 lines.

// areas are the packages under server/ that serve one part of the portal;
// everything else under server/ is the kernel or one of its helpers.
var areas = []string{"account", "admin", "booking", "planning", "board", "ledger", "files", "notify"}

// kernelHelpers are the small packages every area may use.
var kernelHelpers = []string{"area", "request", "response", "route", "scope", "servertest"}

func TestAreasImportNoOtherArea(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./server/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg, imports := fields[0], fields[1:]
		rel := strings.TrimPrefix(pkg, "cardhour/server")
		rel = strings.TrimPrefix(rel, "/")
		seen[rel] = true
		for _, imp := range imports {
			if !strings.HasPrefix(imp, "cardhour/server") {
				continue
			}
			to := strings.TrimPrefix(strings.TrimPrefix(imp, "cardhour/server"), "/")
			switch {
			case slices.Contains(areas, rel) && slices.Contains(areas, to):
				t.Errorf("area %s imports area %s: what two areas share belongs in a kernel helper (%s)", rel, to, strings.Join(kernelHelpers, ", "))
			case slices.Contains(areas, rel) && to == "":
				t.Errorf("area %s imports the kernel (cardhour/server): dependencies point from the kernel to the areas", rel)
			case slices.Contains(kernelHelpers, rel) && rel != "servertest" && (to == "" || slices.Contains(areas, to)):
				t.Errorf("kernel helper %s imports %s: helpers sit below the areas", rel, imp)
			}
		}
	}
	for _, a := range append(areas, kernelHelpers...) {
		if !seen[a] {
			t.Errorf("server/%s is not a package any more: update the lists in layout_test.go and the README's Layout", a)
		}
	}
}

func TestProductImportsNoTestHelper(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasSuffix(dep, "test") && strings.HasPrefix(dep, "cardhour/") {
			t.Errorf("the cardhour binary depends on %s, a package for tests", dep)
		}
	}
}

func TestNoFunctionOver150Lines(t *testing.T) {
	t.Parallel()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || strings.HasSuffix(path, "_templ.go") {
			return nil
		}
		fset := gotoken.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			if n := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1; n > 150 {
				t.Errorf("%s: %s is %d lines; split it (at most 150)", path, fn.Name.Name, n)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
