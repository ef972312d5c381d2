// Package deploy holds the tests of what ships Bunting: the container image
// built from the repository's Dockerfile (image_test.go) and the Helm chart
// under helm/bunting (helm_test.go). It is a module of its own so that Helm
// and the Kubernetes API types stay out of the bunting binary's build.
package deploy
