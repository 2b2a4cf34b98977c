// A setup file of the e2e run: the README's AppModule reads ZK_CONNECT when it is loaded.
process.env.ZK_CONNECT = process.env.ZKRX_TEST_CONNECT;

export {};
