/** The geoproxy server and command line. */
export const packageName = "@geo/proxy";
