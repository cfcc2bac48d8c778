// Command ociimage writes a minimal container image of eksdoctor as an OCI image
// layout in a tar file, without a container engine: one layer holding the static
// binary (and an empty /tmp and /work), a config that runs it as an unprivileged
// user, one manifest per platform and an index of them. The same binaries and
// epoch give the same bytes. The file loads with `docker load`, `podman load`
// or `skopeo copy oci-archive:FILE docker://…`.
//
//	ociimage -out FILE -version V -epoch SECONDS OS/ARCH=BINARY...
package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/eksdoctor/eksdoctor/internal/outputfs"
)

func main() {
	out := flag.String("out", "", "the image file to write")
	version := flag.String("version", "dev", "the version the image is tagged with")
	epoch := flag.Int64("epoch", 0, "the time written in the image (seconds since 1970), for reproducible images")
	flag.Parse()
	if *out == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: ociimage -out FILE [-version V] [-epoch SECONDS] OS/ARCH=BINARY...")
		os.Exit(2)
	}
	bins := map[string]string{}
	for _, a := range flag.Args() {
		platform, bin, ok := strings.Cut(a, "=")
		if !ok || !strings.Contains(platform, "/") {
			fmt.Fprintf(os.Stderr, "ociimage: %q is not OS/ARCH=BINARY\n", a)
			os.Exit(2)
		}
		bins[platform] = bin
	}
	data, err := Build(bins, *version, time.Unix(*epoch, 0).UTC())
	if err == nil {
		err = outputfs.WriteFile(*out, data, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "ociimage:", err)
		os.Exit(1)
	}
}

// Descriptor is an OCI content descriptor.
type Descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Platform    *Platform         `json:"platform,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// Platform is the OS and architecture of an image.
type Platform struct {
	Architecture string `json:"architecture"`
	OS           string `json:"os"`
}

const (
	mediaIndex    = "application/vnd.oci.image.index.v1+json"
	mediaManifest = "application/vnd.oci.image.manifest.v1+json"
	mediaConfig   = "application/vnd.oci.image.config.v1+json"
	mediaLayer    = "application/vnd.oci.image.layer.v1.tar+gzip"
	// User is the unprivileged user the image runs as (the "nonroot" of
	// distroless images).
	User = "65532:65532"
)

// Build makes the OCI image layout, as a tar file, of binaries by platform
// (linux/amd64 → path).
func Build(bins map[string]string, version string, created time.Time) ([]byte, error) {
	blobs := blobStore{}
	platforms := make([]string, 0, len(bins))
	for p := range bins {
		platforms = append(platforms, p)
	}
	sort.Strings(platforms)
	index := struct {
		SchemaVersion int          `json:"schemaVersion"`
		MediaType     string       `json:"mediaType"`
		Manifests     []Descriptor `json:"manifests"`
	}{SchemaVersion: 2, MediaType: mediaIndex}
	for _, p := range platforms {
		md, err := blobs.platformImage(p, bins[p], version, created)
		if err != nil {
			return nil, err
		}
		index.Manifests = append(index.Manifests, md)
	}
	if len(index.Manifests) == 0 {
		return nil, errors.New("no binary given")
	}
	indexJSON, err := json.Marshal(index)
	if err != nil {
		return nil, err
	}
	return layout(indexJSON, blobs, created)
}

// blobStore holds an image layout's blobs by digest.
type blobStore map[string][]byte

// put stores b and returns its descriptor.
func (blobs blobStore) put(media string, b []byte) Descriptor {
	sum := sha256.Sum256(b)
	d := "sha256:" + hex.EncodeToString(sum[:])
	blobs[d] = b
	return Descriptor{MediaType: media, Digest: d, Size: int64(len(b))}
}

// platformImage stores the layer, config and manifest of the image for
// platform (OS/ARCH) holding the binary at path, and returns the manifest's
// descriptor for the index.
func (blobs blobStore) platformImage(platform, path, version string, created time.Time) (Descriptor, error) {
	osName, arch, _ := strings.Cut(platform, "/")
	bin, err := os.ReadFile(path)
	if err != nil {
		return Descriptor{}, err
	}
	layer, diffID, err := rootfs(bin, created)
	if err != nil {
		return Descriptor{}, err
	}
	layerDesc := blobs.put(mediaLayer, layer)
	config, err := imageConfig(osName, arch, version, diffID, created)
	if err != nil {
		return Descriptor{}, err
	}
	configDesc := blobs.put(mediaConfig, config)
	manifest, err := json.Marshal(map[string]any{
		"schemaVersion": 2,
		"mediaType":     mediaManifest,
		"config":        configDesc,
		"layers":        []Descriptor{layerDesc},
	})
	if err != nil {
		return Descriptor{}, err
	}
	md := blobs.put(mediaManifest, manifest)
	md.Platform = &Platform{Architecture: arch, OS: osName}
	md.Annotations = map[string]string{"org.opencontainers.image.ref.name": version}
	return md, nil
}

// imageConfig is the image configuration: the binary as entrypoint, run as
// User in /work, over the one layer whose uncompressed digest is diffID.
func imageConfig(osName, arch, version, diffID string, created time.Time) ([]byte, error) {
	return json.Marshal(map[string]any{
		"created":      created.Format(time.RFC3339),
		"architecture": arch,
		"os":           osName,
		"config": map[string]any{
			"User":       User,
			"Entrypoint": []string{"/eksdoctor"},
			"WorkingDir": "/work",
			"Env":        []string{"HOME=/tmp"},
			"Labels": map[string]string{
				"org.opencontainers.image.title":   "eksdoctor",
				"org.opencontainers.image.version": version,
				"org.opencontainers.image.source":  "https://github.com/eksdoctor/eksdoctor",
			},
		},
		"rootfs":  map[string]any{"type": "layers", "diff_ids": []string{diffID}},
		"history": []map[string]string{{"created": created.Format(time.RFC3339), "created_by": "eksdoctor release build (hack/release.sh)"}},
	})
}

// layout is the tar file of the OCI image layout: oci-layout, the index, then
// the blobs in digest order.
func layout(indexJSON []byte, blobs blobStore, created time.Time) ([]byte, error) {
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	add := func(name string, data []byte) error {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(data)), ModTime: created, Typeflag: tar.TypeReg, Format: tar.FormatPAX}); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	}
	if err := add("oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)); err != nil {
		return nil, err
	}
	if err := add("index.json", indexJSON); err != nil {
		return nil, err
	}
	digests := make([]string, 0, len(blobs))
	for d := range blobs {
		digests = append(digests, d)
	}
	sort.Strings(digests)
	for _, d := range digests {
		if err := add("blobs/sha256/"+strings.TrimPrefix(d, "sha256:"), blobs[d]); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// rootfs is the image's one layer, gzip-compressed, and the digest of the
// uncompressed tar (its diff ID).
func rootfs(bin []byte, created time.Time) (layer []byte, diffID string, err error) {
	var raw bytes.Buffer
	tw := tar.NewWriter(&raw)
	for _, h := range []*tar.Header{
		{Name: "tmp/", Mode: 0o1777, Typeflag: tar.TypeDir},
		{Name: "work/", Mode: 0o755, Typeflag: tar.TypeDir, Uid: 65532, Gid: 65532},
		{Name: "eksdoctor", Mode: 0o755, Typeflag: tar.TypeReg, Size: int64(len(bin))},
	} {
		h.ModTime, h.Format = created, tar.FormatPAX
		if err := tw.WriteHeader(h); err != nil {
			return nil, "", err
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := tw.Write(bin); err != nil {
				return nil, "", err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, "", err
	}
	sum := sha256.Sum256(raw.Bytes())
	var gz bytes.Buffer
	zw, err := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	if err != nil {
		return nil, "", err
	}
	if _, err := zw.Write(raw.Bytes()); err != nil {
		return nil, "", err
	}
	if err := zw.Close(); err != nil {
		return nil, "", err
	}
	return gz.Bytes(), "sha256:" + hex.EncodeToString(sum[:]), nil
}
