package icechunk

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/zarrfs/zarrfs/store"
)

// state is what a repository's references and configuration said when
// they were last read.
type state struct {
	info *RepoInfo
	// containers are the repository's virtual chunk containers (spec 1:
	// config.yaml; spec 2: the repo info's config), or containersErr why
	// they could not be read (which refuses every virtual chunk).
	containers    []Container
	containersErr error
}

// mainRef is a spec 1 repository's main branch, which every one has.
const mainRef = "refs/branch.main/ref.json"

// Refresh reads the references and the virtual chunk containers again
// (a spec 2 repo info file; a spec 1 repository's ref files and
// config.yaml), so that branches and containers follow their changes.
func (r *Repo) Refresh(ctx context.Context) error {
	s, err := r.read(ctx)
	if err != nil {
		return fmt.Errorf("%s: %w", r, err)
	}
	r.mu.Lock()
	r.state = s
	r.mu.Unlock()
	return nil
}

// read reads what says which spec the repository follows, its
// references and its containers. The three files that can say it go out
// at once (a spec 2 repo info at "repo"; a spec 1 main branch and
// config.yaml), so that a far repository costs one round trip here and
// one for the snapshot it shows: they are small, and a store that is no
// repository pays three missing keys in one round trip. A store with
// neither a repo info (with Icechunk's magic) nor a spec 1 main branch
// gives an error matching ErrNotRepo.
func (r *Repo) read(ctx context.Context) (*state, error) {
	var (
		wg               sync.WaitGroup
		main, config     []byte
		mainErr, confErr error
	)
	wg.Add(2)
	go func() {
		defer wg.Done()
		main, mainErr = r.st.Get(ctx, mainRef)
	}()
	go func() {
		defer wg.Done()
		config, confErr = r.st.GetRange(ctx, "config.yaml", store.Range(0, maxConfig+1))
	}()
	repo, repoErr := r.st.Get(ctx, "repo")
	wg.Wait()

	if repoErr == nil && bytes.HasPrefix(repo, []byte(Magic)) {
		info, err := ParseRepoInfo(repo)
		if err != nil {
			return nil, fmt.Errorf("repo: %w", err)
		}
		s := &state{info: info}
		if s.containers, err = ParseConfigFlex(info.Config); err != nil {
			s.containersErr = fmt.Errorf("%w: %v", ErrRefused, err)
		}
		return s, nil
	}
	switch {
	case mainErr == nil:
	case !errors.Is(mainErr, store.ErrNotExist):
		return nil, fmt.Errorf("%s: %w", mainRef, mainErr)
	case repoErr != nil && !errors.Is(repoErr, store.ErrNotExist):
		return nil, fmt.Errorf("%w: no %s, and repo: %v", ErrNotRepo, mainRef, repoErr)
	default:
		return nil, fmt.Errorf("%w: no repo file and no %s", ErrNotRepo, mainRef)
	}
	info, err := r.readRefsV1(ctx, main)
	if err != nil {
		return nil, err
	}
	s := &state{info: info}
	switch {
	case errors.Is(confErr, store.ErrNotExist):
	case confErr != nil:
		return nil, fmt.Errorf("config.yaml: %w", confErr)
	default:
		if s.containers, err = ParseConfigYAML(config); err != nil {
			s.containersErr = fmt.Errorf("%w: %v", ErrRefused, err)
		}
	}
	return s, nil
}

// readRefsV1 reads the refs/ of a spec 1 repository whose main branch
// file holds main: refs/branch.NAME/ref.json and refs/tag.NAME/ref.json,
// less tags with a ref.json.deleted tombstone. A store that cannot list
// shows branch main only. Its snapshots are those reached from the
// references through parent ids.
func (r *Repo) readRefsV1(ctx context.Context, main []byte) (*RepoInfo, error) {
	id, err := parseRefJSON(main)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", mainRef, err)
	}
	info := &RepoInfo{Spec: 1, Branches: map[string]ID{"main": id}, Tags: map[string]ID{}}
	l, ok := r.st.(store.Lister)
	if !ok {
		return info, nil
	}
	_, names, err := l.ListDir(ctx, "refs")
	if err != nil {
		return nil, fmt.Errorf("refs: %w", err)
	}
	// The refs are read at once (at most refConcurrency at a time), each
	// tag's tombstone beside its ref.json: one round trip for them all
	// where one after another took one a ref (and two a tag).
	got := make([]refV1, len(names))
	var g errgroup.Group
	g.SetLimit(refConcurrency)
	for i, n := range names {
		kind, _, ok := strings.Cut(n, ".")
		if !ok || (kind != "branch" && kind != "tag") || n == "branch.main" {
			continue
		}
		g.Go(func() error {
			got[i] = r.readRefV1(ctx, n, kind == "tag")
			return nil
		})
	}
	g.Wait()
	for i, n := range names {
		kind, name, _ := strings.Cut(n, ".")
		switch g := got[i]; {
		case g.err != nil:
			return nil, g.err
		case !g.found || g.gone:
		case kind == "branch":
			info.Branches[name] = g.id
		default:
			info.Tags[name] = g.id
		}
	}
	return info, nil
}

// refConcurrency bounds the spec 1 ref files read at once.
const refConcurrency = 16

// refV1 is what readRefV1 found of one spec 1 reference.
type refV1 struct {
	id          ID
	found, gone bool // gone: a tag with a tombstone
	err         error
}

// readRefV1 reads refs/NAME/ref.json and, for a tag, looks for its
// ref.json.deleted tombstone at the same time. A ref that cannot be read
// is skipped (a deleted branch, or one being written); one that does not
// parse is an error.
func (r *Repo) readRefV1(ctx context.Context, n string, tag bool) refV1 {
	gone := make(chan bool, 1)
	if tag {
		go func() {
			_, err := r.st.GetRange(ctx, "refs/"+n+"/ref.json.deleted", store.Range(0, 1))
			gone <- err == nil
		}()
	} else {
		gone <- false
	}
	data, err := r.st.Get(ctx, "refs/"+n+"/ref.json")
	res := refV1{gone: <-gone}
	if err != nil {
		return res
	}
	res.found = true
	if res.id, err = parseRefJSON(data); err != nil {
		res.err = fmt.Errorf("refs/%s/ref.json: %w", n, err)
	}
	return res
}
