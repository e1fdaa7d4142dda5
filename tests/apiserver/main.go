// Command butler-test-apiserver runs a real Kubernetes control plane on loopback for the test suite: an embedded
// etcd and kube-apiserver in this process and, with -controllers, the kube-controller-manager controllers the
// tests rely on (namespace deletion, garbage collection, service accounts) in a child process of this binary,
// all built from the Kubernetes Go modules.
//
//	butler-test-apiserver -dir DIR [-controllers]
//
// Started again with the DIR of an earlier run, it restarts that control plane: same etcd data, PKI and ports.
//
// It writes into DIR: ca.crt; other-ca.crt (an unrelated CA, for negative tests); the API server's serving
// pair; a serving pair for the hook service on 127.0.0.1 signed by ca.crt (hook.crt/hook.key, for admission
// webhooks and Metacontroller hooks over TLS), a client pair for Metacontroller (metacontroller.crt/.key), a
// pair signed by the unrelated other-ca.crt (stranger.crt/.key); tokens.csv; and a kubeconfig (admin token, member of
// system:masters, so it may impersonate). The API server authenticates to every admission webhook with a client
// certificate (webhook-client.crt/.key, CN kube-apiserver-webhook-client, signed by ca.crt), configured as a
// cluster operator would: an AdmissionConfiguration (admission-config.yaml) whose WebhookAdmissionConfiguration
// points at a kubeconfig (webhook-client.kubeconfig) holding the pair for every webhook host. When /readyz answers, it writes DIR/ready holding the server URL. It
// stops on SIGTERM/SIGINT or when its standard input closes, so a test runner that dies never leaves it behind.
//
// Test-only code: it is not part of the product and is never shipped.
package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"flag"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	apiserver "k8s.io/kubernetes/cmd/kube-apiserver/app"
	controllermanager "k8s.io/kubernetes/cmd/kube-controller-manager/app"
)

const adminToken = "butler-test-admin-token"

func main() {
	// The controllers run in a child process of this same binary: kube-apiserver and kube-controller-manager
	// each apply the process-wide logging configuration once, so they cannot share a process.
	if len(os.Args) > 1 && os.Args[1] == "kube-controller-manager" {
		cmd := controllermanager.NewControllerManagerCommand()
		cmd.SetArgs(os.Args[2:])
		if err := cmd.Execute(); err != nil {
			os.Exit(1)
		}
		return
	}
	dir := flag.String("dir", "", "state directory (certificates, kubeconfig, etcd data)")
	controllers := flag.Bool("controllers", false, "also run the namespace and garbage collector controllers")
	flag.Parse()
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "usage: butler-test-apiserver -dir DIR [-controllers]")
		os.Exit(2)
	}
	if err := run(*dir, *controllers); err != nil {
		fmt.Fprintln(os.Stderr, "butler-test-apiserver:", err)
		os.Exit(1)
	}
}

func run(dir string, controllers bool) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	go func() {
		// The parent test process holds our stdin; EOF means it is gone.
		_, _ = io.Copy(io.Discard, os.Stdin)
		stop()
	}()

	// A restart in the same directory (the scale tier's control-plane fault) keeps etcd's data, the PKI and the
	// ports, so every client's kubeconfig and token stays valid across it.
	_ = os.Remove(filepath.Join(dir, "ready"))
	ports, restart, err := statePorts(dir)
	if err != nil {
		return err
	}
	apiPort, etcdClient, etcdPeer := ports[0], ports[1], ports[2]
	server := fmt.Sprintf("https://127.0.0.1:%d", apiPort)
	if !restart {
		if err := writePKI(dir); err != nil {
			return err
		}
		if err := writeKubeconfig(dir, server); err != nil {
			return err
		}
	}

	etcd, err := startEtcd(filepath.Join(dir, "etcd"), etcdClient, etcdPeer)
	if err != nil {
		return fmt.Errorf("etcd: %w", err)
	}
	defer etcd.Close()

	apiErr := make(chan error, 1)
	go func() {
		cmd := apiserver.NewAPIServerCommand()
		cmd.SetArgs(apiserverArgs(dir, apiPort, etcdClient))
		apiErr <- cmd.ExecuteContext(ctx)
	}()

	if err := waitReady(ctx, dir, server, apiErr); err != nil {
		return err
	}
	if controllers {
		self, err := os.Executable()
		if err != nil {
			return err
		}
		cm := exec.CommandContext(ctx, self, "kube-controller-manager",
			"--kubeconfig="+filepath.Join(dir, "kubeconfig"),
			"--controllers=namespace-controller,garbage-collector-controller,serviceaccount-controller,serviceaccount-token-controller",
			"--service-account-private-key-file="+filepath.Join(dir, "sa.key"),
			"--root-ca-file="+filepath.Join(dir, "ca.crt"),
			"--use-service-account-credentials=false",
			"--leader-elect=false",
			"--secure-port=0",
			"--v=0",
		)
		cm.Stdout = os.Stderr
		cm.Stderr = os.Stderr
		cm.Cancel = func() error { return cm.Process.Signal(syscall.SIGTERM) }
		cm.WaitDelay = 5 * time.Second
		if err := cm.Start(); err != nil {
			return fmt.Errorf("kube-controller-manager: %w", err)
		}
		defer func() {
			stop()
			_ = cm.Wait()
		}()
	}
	if err := os.WriteFile(filepath.Join(dir, "ready"), []byte(server+"\n"), 0o600); err != nil {
		return err
	}
	fmt.Println("ready", server)

	select {
	case <-ctx.Done():
		return nil
	case err := <-apiErr:
		return fmt.Errorf("kube-apiserver stopped: %v", err)
	}
}

func apiserverArgs(dir string, port, etcdPort int) []string {
	p := func(name string) string { return filepath.Join(dir, name) }
	return []string{
		fmt.Sprintf("--etcd-servers=http://127.0.0.1:%d", etcdPort),
		fmt.Sprintf("--secure-port=%d", port),
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--tls-cert-file=" + p("apiserver.crt"),
		"--tls-private-key-file=" + p("apiserver.key"),
		"--client-ca-file=" + p("ca.crt"),
		"--token-auth-file=" + p("tokens.csv"),
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file=" + p("sa.pub"),
		"--service-account-signing-key-file=" + p("sa.key"),
		"--service-cluster-ip-range=10.96.0.0/24",
		"--endpoint-reconciler-type=none",
		"--enable-priority-and-fairness=false",
		"--profiling=false",
		"--allow-privileged=true",
		"--cert-dir=" + p("apiserver-certs"),
		"--admission-control-config-file=" + p("admission-config.yaml"),
		"--v=0",
	}
}

func startEtcd(dir string, clientPort, peerPort int) (*embed.Etcd, error) {
	cfg := embed.NewConfig()
	cfg.Dir = dir
	cfg.Name = "default"
	client := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", clientPort)}
	peer := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", peerPort)}
	cfg.ListenClientUrls = []url.URL{client}
	cfg.AdvertiseClientUrls = []url.URL{client}
	cfg.ListenPeerUrls = []url.URL{peer}
	cfg.AdvertisePeerUrls = []url.URL{peer}
	cfg.InitialCluster = "default=" + peer.String()
	cfg.LogLevel = "error"
	cfg.UnsafeNoFsync = true
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, err
	}
	select {
	case <-e.Server.ReadyNotify():
		return e, nil
	case <-time.After(60 * time.Second):
		e.Close()
		return nil, fmt.Errorf("not ready after 60s")
	}
}

func waitReady(ctx context.Context, dir, server string, apiErr <-chan error) error {
	caPEM, err := os.ReadFile(filepath.Join(dir, "ca.crt"))
	if err != nil {
		return err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	client := &http.Client{
		Timeout:   2 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}},
	}
	deadline := time.Now().Add(3 * time.Minute)
	for time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-apiErr:
			return fmt.Errorf("kube-apiserver stopped before ready: %v", err)
		case <-time.After(200 * time.Millisecond):
		}
		req, _ := http.NewRequest(http.MethodGet, server+"/readyz", nil)
		req.Header.Set("Authorization", "Bearer "+adminToken)
		res, err := client.Do(req)
		if err != nil {
			continue
		}
		res.Body.Close()
		if res.StatusCode == http.StatusOK {
			return nil
		}
	}
	return fmt.Errorf("kube-apiserver not ready after 3 minutes")
}

// statePorts returns the ports of the control plane in dir: those of its previous start when it has one
// (restart is then true), else three free ones, recorded for the next start.
func statePorts(dir string) ([]int, bool, error) {
	file := filepath.Join(dir, "ports")
	if data, err := os.ReadFile(file); err == nil {
		ports := make([]int, 3)
		if _, err := fmt.Sscanf(string(data), "%d %d %d", &ports[0], &ports[1], &ports[2]); err != nil {
			return nil, false, fmt.Errorf("%s: %w", file, err)
		}
		return ports, true, nil
	}
	ports, err := freePorts(3)
	if err != nil {
		return nil, false, err
	}
	text := fmt.Sprintf("%d %d %d\n", ports[0], ports[1], ports[2])
	return ports, false, os.WriteFile(file, []byte(text), 0o600)
}

func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	listeners := make([]net.Listener, 0, n)
	defer func() {
		for _, l := range listeners {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// writePKI writes a CA, the API server's serving pair, the hook service's serving pair, the service account
// key pair and the static token file.
func writePKI(dir string) error {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "butler-test-ca"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return err
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return err
	}
	if err := writePEM(filepath.Join(dir, "ca.crt"), "CERTIFICATE", caDER); err != nil {
		return err
	}
	caKeyDER, err := x509.MarshalPKCS8PrivateKey(caKey)
	if err != nil {
		return err
	}
	if err := writePEM(filepath.Join(dir, "ca.key"), "PRIVATE KEY", caKeyDER); err != nil {
		return err
	}
	// A second, unrelated CA: tests use it to show that a server it does not vouch for is refused, and its
	// leaf "stranger" is a certificate the hook service must not trust (and a key pair to rotate to).
	otherCert, otherKey, err := writeCA(dir, "other-ca")
	if err != nil {
		return err
	}
	for i, name := range []string{"apiserver", "hook", "metacontroller"} {
		if err := writeLeaf(dir, name, int64(i+2), caCert, caKey); err != nil {
			return err
		}
	}
	if err := writeLeaf(dir, "stranger", 2, otherCert, otherKey); err != nil {
		return err
	}
	if err := writeLeafNamed(dir, "webhook-client", "kube-apiserver-webhook-client", 5, caCert, caKey); err != nil {
		return err
	}
	if err := writeAdmissionConfig(dir); err != nil {
		return err
	}
	saKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	saDER, err := x509.MarshalPKCS8PrivateKey(saKey)
	if err != nil {
		return err
	}
	if err := writePEM(filepath.Join(dir, "sa.key"), "PRIVATE KEY", saDER); err != nil {
		return err
	}
	pubDER, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return err
	}
	if err := writePEM(filepath.Join(dir, "sa.pub"), "PUBLIC KEY", pubDER); err != nil {
		return err
	}
	tokens := strings.Join([]string{
		adminToken + `,butler-test-admin,butler-test-admin,"system:masters"`,
	}, "\n") + "\n"
	return os.WriteFile(filepath.Join(dir, "tokens.csv"), []byte(tokens), 0o600)
}

func writeCA(dir, name string) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, err
	}
	return cert, key, writePEM(filepath.Join(dir, name+".crt"), "CERTIFICATE", der)
}

func writeLeaf(dir, name string, serial int64, ca *x509.Certificate, caKey *ecdsa.PrivateKey) error {
	return writeLeafNamed(dir, name, name, serial, ca, caKey)
}

// writeAdmissionConfig writes the AdmissionConfiguration that makes the API server present webhook-client.crt to
// every admission webhook (kube-apiserver --admission-control-config-file).
func writeAdmissionConfig(dir string) error {
	kubeconfig := fmt.Sprintf(`apiVersion: v1
kind: Config
users:
- name: "*"
  user:
    client-certificate: %s
    client-key: %s
`, filepath.Join(dir, "webhook-client.crt"), filepath.Join(dir, "webhook-client.key"))
	if err := os.WriteFile(filepath.Join(dir, "webhook-client.kubeconfig"), []byte(kubeconfig), 0o600); err != nil {
		return err
	}
	config := fmt.Sprintf(`apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: ValidatingAdmissionWebhook
  configuration:
    apiVersion: apiserver.config.k8s.io/v1
    kind: WebhookAdmissionConfiguration
    kubeConfigFile: %[1]s
- name: MutatingAdmissionWebhook
  configuration:
    apiVersion: apiserver.config.k8s.io/v1
    kind: WebhookAdmissionConfiguration
    kubeConfigFile: %[1]s
`, filepath.Join(dir, "webhook-client.kubeconfig"))
	return os.WriteFile(filepath.Join(dir, "admission-config.yaml"), []byte(config), 0o600)
}

func writeLeafNamed(dir, name, commonName string, serial int64, ca *x509.Certificate, caKey *ecdsa.PrivateKey) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial),
		Subject:      pkix.Name{CommonName: commonName},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		DNSNames:     []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("10.96.0.1")},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return err
	}
	if err := writePEM(filepath.Join(dir, name+".crt"), "CERTIFICATE", der); err != nil {
		return err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return err
	}
	return writePEM(filepath.Join(dir, name+".key"), "PRIVATE KEY", keyDER)
}

func writePEM(path, kind string, der []byte) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600)
}

func writeKubeconfig(dir, server string) error {
	config := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: test
  cluster:
    server: %s
    certificate-authority: %s
users:
- name: admin
  user:
    token: %s
contexts:
- name: test
  context:
    cluster: test
    user: admin
current-context: test
`, server, filepath.Join(dir, "ca.crt"), adminToken)
	return os.WriteFile(filepath.Join(dir, "kubeconfig"), []byte(config), 0o600)
}
