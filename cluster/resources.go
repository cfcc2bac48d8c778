package cluster

import (
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
)

// Resource lists repeat: most containers of a monorepo ask for one of a few
// dozen combinations (a sidecar's, an init container's, the team's sizes),
// and a cluster's DaemonSets run the same requests on every node. Decoded
// lists are shared by their text, read-only like every decoded value, so a
// hundred thousand containers do not hold a map each. The table is bounded.
var (
	resourceLists     sync.Map // key -> corev1.ResourceList
	resourceListsHeld atomic.Int64
)

const maxSharedResourceLists = 4096

// SharedResourceList is the list shared for key (the text of its entries,
// names in order: "cpu=100m\x00memory=64Mi"), made by make the first time
// while the table has room.
func SharedResourceList(key string, make func() (corev1.ResourceList, error)) (corev1.ResourceList, error) {
	if l, ok := resourceLists.Load(key); ok {
		return l.(corev1.ResourceList), nil
	}
	out, err := make()
	if err == nil && resourceListsHeld.Add(1) <= maxSharedResourceLists {
		resourceLists.Store(key, out)
	}
	return out, err
}

// ShareResourceList returns a list equal to l that is shared with every
// other equal small list handed in (nil and empty lists, and lists of more
// than four resources, are returned as they are). Quantities are compared by
// their canonical text, which is what every reader of them sees.
func ShareResourceList(l corev1.ResourceList) corev1.ResourceList {
	if len(l) == 0 || len(l) > 4 {
		return l
	}
	var names [4]corev1.ResourceName
	n := 0
	for k := range l {
		names[n] = k
		n++
	}
	slices.Sort(names[:n])
	var b strings.Builder
	for i, k := range names[:n] {
		if i > 0 {
			b.WriteByte(0)
		}
		q := l[k]
		b.WriteString(string(k))
		b.WriteByte('=')
		b.WriteString(q.String())
	}
	// The typed list's key is its canonical text, the decoded one's its
	// source text: the two never meet in the table (a leading \x01).
	out, _ := SharedResourceList("\x01"+b.String(), func() (corev1.ResourceList, error) { return l, nil })
	return out
}
