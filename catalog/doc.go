// Package catalog holds eksdoctor's embedded knowledge: the EC2 instance-type catalog
// with Karpenter's labels and allocatable resources, and the defaults of well-known
// Helm charts and EKS add-ons by version, and what it knows of EKS Auto Mode. Data lives in embedded files with their
// provenance (see the README beside each); this package only decodes and indexes it.
package catalog
